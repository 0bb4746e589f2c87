package fakemodel

import (
	"encoding/json"
	"net/http"
)

// sseWriter writes a server-sent event stream, flushing after each event
// so that the agent sees a real stream.
type sseWriter struct {
	w   http.ResponseWriter
	f   http.Flusher
	err error
}

// newSSE starts an event stream (status 200, text/event-stream).
func newSSE(w http.ResponseWriter) *sseWriter {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	w.WriteHeader(http.StatusOK)
	f, _ := w.(http.Flusher)
	return &sseWriter{w: w, f: f}
}

// event writes one event: "event: NAME" (left out when name is empty) and
// "data: JSON".
func (s *sseWriter) event(name string, data any) {
	b, err := json.Marshal(data)
	if err != nil {
		s.fail(err)
		return
	}
	s.rawEvent(name, string(b))
}

// rawEvent writes one event whose data is taken as it is (e.g. [DONE]).
func (s *sseWriter) rawEvent(name, data string) {
	if s.err != nil {
		return
	}
	var buf []byte
	if name != "" {
		buf = append(buf, "event: "...)
		buf = append(buf, name...)
		buf = append(buf, '\n')
	}
	buf = append(buf, "data: "...)
	buf = append(buf, data...)
	buf = append(buf, '\n', '\n')
	if _, err := s.w.Write(buf); err != nil {
		s.fail(err)
		return
	}
	if s.f != nil {
		s.f.Flush()
	}
}

func (s *sseWriter) fail(err error) {
	if s.err == nil {
		s.err = err
	}
}

package fakemodel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
)

// Options configure a Server.
type Options struct {
	// Scenario decides every assistant turn. Required.
	Scenario Scenario
	// RequestLog, when set, receives one JSON line per request: its
	// number, method, path, the rule that answered and the body.
	RequestLog io.Writer
	// Addr is the listen address for Start; default 127.0.0.1:0.
	Addr string
}

// Server is a scripted fake model API server.
type Server struct {
	opts    Options
	handler http.Handler
	http    *http.Server
	ln      net.Listener
	serve   chan error

	logMu sync.Mutex
	reqs  atomic.Int64
	ids   atomic.Int64
}

// New returns a Server that is not listening yet; Handler serves it (in
// tests through httptest), Start listens.
func New(opts Options) (*Server, error) {
	if opts.Scenario == nil {
		return nil, errors.New("fakemodel: no scenario")
	}
	s := &Server{opts: opts}
	mux := http.NewServeMux()
	for _, r := range s.routes() {
		mux.HandleFunc(r.pattern, r.handle)
	}
	mux.HandleFunc("/", s.notFound)
	s.handler = mux
	return s, nil
}

type route struct {
	pattern string
	handle  http.HandlerFunc
}

// routes lists every API endpoint; each API file provides its handlers.
func (s *Server) routes() []route {
	return []route{
		{"POST /v1/messages", s.anthropicMessages},
		{"POST /v1/messages/count_tokens", s.anthropicCountTokens},
		{"POST /v1/chat/completions", s.chatCompletions},
		{"POST /chat/completions", s.chatCompletions},
		{"GET /v1/models", s.chatModels},
		{"GET /models", s.chatModels},
		{"POST /v1/responses", s.responses},
		{"POST /v1beta/models/{call}", s.generateContent},
	}
}

// Handler returns the server's HTTP handler.
func (s *Server) Handler() http.Handler { return s.handler }

// Start listens on Options.Addr (127.0.0.1:0 by default) and serves in the
// background until Stop.
func Start(opts Options) (*Server, error) {
	s, err := New(opts)
	if err != nil {
		return nil, err
	}
	addr := opts.Addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("fakemodel: listen: %w", err)
	}
	s.ln = ln
	s.http = &http.Server{Handler: s.handler}
	s.serve = make(chan error, 1)
	go func() { s.serve <- s.http.Serve(ln) }()
	return s, nil
}

// URL is the base URL of a started server, e.g. http://127.0.0.1:41234
// (no trailing slash).
func (s *Server) URL() string {
	if s.ln == nil {
		return ""
	}
	return "http://" + s.ln.Addr().String()
}

// Stop shuts the server down gracefully: open streams may finish until ctx
// ends, then connections are closed.
func (s *Server) Stop(ctx context.Context) error {
	if s.http == nil {
		return nil
	}
	err := s.http.Shutdown(ctx)
	if err != nil {
		_ = s.http.Close()
	}
	if serr := <-s.serve; serr != nil && !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	if err != nil {
		return fmt.Errorf("fakemodel: stop: %w", err)
	}
	return nil
}

// Requests returns how many requests the server has answered.
func (s *Server) Requests() int64 { return s.reqs.Load() }

// nextID returns prefix followed by a per-server number, so that ids in
// recordings are stable from run to run.
func (s *Server) nextID(prefix string) string {
	return fmt.Sprintf("%s%06d", prefix, s.ids.Add(1))
}

// readBody reads a request body; an unreadable one is answered 400.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		s.logRequest(r, body, "unreadable")
		writeError(w, http.StatusBadRequest, fmt.Sprintf("reading body: %v", err))
		return nil, false
	}
	return body, true
}

// request reads and decodes a request and asks the scenario for its
// turn, whose tool calls without an id get one opening with toolIDPrefix;
// a request it cannot read or decode is answered 400 and ok is false.
func (s *Server) request(w http.ResponseWriter, r *http.Request, decode func([]byte) (*Request, error), toolIDPrefix string) (req *Request, turn Turn, ok bool) {
	body, ok := s.readBody(w, r)
	if !ok {
		return nil, Turn{}, false
	}
	req, err := decode(body)
	if err != nil {
		s.logRequest(r, body, "bad-request")
		writeError(w, http.StatusBadRequest, err.Error())
		return nil, Turn{}, false
	}
	turn = s.decide(r, body, req)
	for i := range turn.ToolCalls {
		if turn.ToolCalls[i].ID == "" {
			turn.ToolCalls[i].ID = s.nextID(toolIDPrefix)
		}
	}
	return req, turn, true
}

// decide decodes nothing itself: it numbers the request, asks the scenario
// and logs the request with the rule that answered.
func (s *Server) decide(r *http.Request, body []byte, req *Request) Turn {
	turn, rule := s.opts.Scenario.Next(req)
	s.logRequest(r, body, rule)
	return turn
}

type logLine struct {
	N      int64           `json:"n"`
	Method string          `json:"method"`
	Path   string          `json:"path"`
	Rule   string          `json:"rule"`
	Body   json.RawMessage `json:"body,omitempty"`
	Text   string          `json:"text,omitempty"`
}

func (s *Server) logRequest(r *http.Request, body []byte, rule string) {
	n := s.reqs.Add(1)
	if s.opts.RequestLog == nil {
		return
	}
	line := logLine{N: n, Method: r.Method, Path: r.URL.RequestURI(), Rule: rule}
	if json.Valid(body) {
		line.Body = body
	} else {
		line.Text = string(body)
	}
	b, err := json.Marshal(line)
	if err != nil {
		return
	}
	s.logMu.Lock()
	defer s.logMu.Unlock()
	_, _ = s.opts.RequestLog.Write(append(b, '\n'))
}

func (s *Server) notFound(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.logRequest(r, body, "not-found")
	writeError(w, http.StatusNotFound, "fakemodel: no such endpoint: "+r.Method+" "+r.URL.Path)
}

// writeError answers with an OpenAI/Anthropic-like JSON error body.
func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, map[string]any{"type": "error", "error": map[string]any{"type": "invalid_request_error", "message": msg}})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		code, b = http.StatusInternalServerError, []byte(`{"error":{"message":"encoding failed"}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(append(b, '\n'))
}

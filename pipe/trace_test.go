package pipe

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

// readAll reads every record of a capture or trace, and the line-level
// errors, until EOF or a fatal error.
func readRecords(t *testing.T, in string) ([]Record, []error, error) {
	t.Helper()
	cr := NewCaptureReader(strings.NewReader(in))
	var recs []Record
	var bad []error
	for {
		r, err := cr.Next()
		if errors.Is(err, io.EOF) {
			return recs, bad, nil
		}
		var ce *CaptureError
		if errors.As(err, &ce) {
			bad = append(bad, err)
			continue
		}
		if err != nil {
			return recs, bad, err
		}
		recs = append(recs, r)
	}
}

// TestTraceRoundTrip: a trace written with AppendTraceHeader and
// AppendTraceFrame reads back as the capture's input and event records:
// frames verbatim (valid JSON as Frame, anything else as Text, invalid
// UTF-8 through base64), timestamps to the millisecond, events in their
// places, connection ordinals.
func TestTraceRoundTrip(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 123456789, time.UTC)
	code := 0
	frames := []struct {
		from  Side
		bytes string
	}{
		{Client, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`},
		{Agent, `{"jsonrpc":"2.0","id":0,"result":{"x":1.50, "y":"\u003c/script>"}}`},
		{Agent, "Using worktree: /x"},
		{Agent, `{"broken"`},
		{Client, "{\"text\":\"\xff\xfe\"}"},
	}
	h := TraceHeader{At: t0, Frames: int64(len(frames)), Dropped: 2, Events: []TraceEvent{
		{After: 0, Record: Record{Event: "start", Version: "0.1.0", Modules: []string{"cursor"}, IDToken: "tok", TS: t0}},
		{After: 5, Record: Record{Event: "exit", Code: &code, TS: t0.Add(time.Second)}},
	}}
	b := AppendTraceHeader(nil, &h)
	for i, f := range frames {
		b = AppendTraceFrame(b, t0.Add(time.Duration(i)*time.Millisecond), 1, f.from, []byte(f.bytes))
	}
	for i, line := range bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n")) {
		if !json.Valid(line) {
			t.Fatalf("line %d is not JSON: %s", i+1, line)
		}
	}
	recs, bad, err := readRecords(t, string(b))
	if err != nil || len(bad) > 0 {
		t.Fatalf("err %v, bad lines %v", err, bad)
	}
	if len(recs) != len(frames)+2 {
		t.Fatalf("%d records, want %d", len(recs), len(frames)+2)
	}
	if r := recs[0]; r.Event != "start" || r.IDToken != "tok" || r.Modules[0] != "cursor" || !r.TS.Equal(t0) {
		t.Errorf("start event %+v", r)
	}
	if r := recs[len(recs)-1]; r.Event != "exit" || r.Code == nil || *r.Code != 0 {
		t.Errorf("exit event %+v", r)
	}
	for i, f := range frames {
		r := recs[i+1]
		got := string(r.Frame)
		if r.Text != nil {
			got = *r.Text
		}
		if got != f.bytes || r.From != f.from || r.Conn != 1 || !r.IsInput() {
			t.Errorf("frame %d: %+v, want %q from %v", i, r, f.bytes, f.from)
		}
		if want := t0.Add(time.Duration(i) * time.Millisecond).Truncate(time.Millisecond); !r.TS.Equal(want) {
			t.Errorf("frame %d at %v, want %v", i, r.TS, want)
		}
		if isJSON := r.Frame != nil; isJSON != (i != 2 && i != 3) { // encoding/json takes invalid UTF-8 in a string as valid
			t.Errorf("frame %d: read as JSON %v", i, isJSON)
		}
	}
	if !bytes.Contains(b, []byte(`"encoding":"base64"`)) {
		t.Error("invalid UTF-8 not carried as base64")
	}
}

// TestTraceFromInspector reads the example of acp-inspector's
// docs/trace-export.md, the bridge's string connections, and a frame
// record whose connection changes.
func TestTraceFromInspector(t *testing.T) {
	in := `{"type":"header","format":"acp-inspector-trace","version":1,"at":1785312000123,"frames":3,"dropped":0,"warning":"ACP frames may contain prompts, file contents, and tool output; nothing is redacted"}
{"type":"frame","at":1785312000456,"connection":1,"direction":"client -> agent","encoding":"utf8","frame":"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":1,\"clientCapabilities\":{}}}"}
{"type":"frame","at":1785312000512,"connection":1,"direction":"agent -> client","encoding":"utf8","frame":"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"protocolVersion\":1,\"agentCapabilities\":{}}}","extra":true}
{"frame":"{}","direction":"client -> agent","at":1785312000600,"type":"frame","connection":"ws-2"}
`
	recs, bad, err := readRecords(t, in)
	if err != nil || len(bad) > 0 {
		t.Fatalf("err %v, bad %v", err, bad)
	}
	if len(recs) != 3 {
		t.Fatalf("%d records", len(recs))
	}
	if string(recs[0].Frame) != `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}` || recs[0].From != Client {
		t.Errorf("first frame %+v", recs[0])
	}
	if recs[1].From != Agent || recs[1].TS.UnixMilli() != 1785312000512 {
		t.Errorf("second frame %+v", recs[1])
	}
	if recs[0].Conn != 1 || recs[1].Conn != 1 || recs[2].Conn != 2 {
		t.Errorf("connections %d %d %d, want 1 1 2", recs[0].Conn, recs[1].Conn, recs[2].Conn)
	}
}

// TestTraceBadInput: each bad line is one CaptureError and reading goes
// on; a header of another version ends the reading with an error; a
// header whose frame count the file does not hold is reported at the end.
func TestTraceBadInput(t *testing.T) {
	const header = `{"type":"header","format":"acp-inspector-trace","version":1,"at":0,"frames":%d,"dropped":0,"warning":""}` + "\n"
	frame := `{"type":"frame","at":0,"connection":1,"direction":"client -> agent","encoding":"utf8","frame":"{}"}` + "\n"
	tests := []struct {
		name    string
		in      string
		frames  int
		bad     []string
		fatal   string
		recsHas int
	}{
		{"unknown_direction", strings.Replace(header, "%d", "2", 1) + frame + strings.Replace(frame, "client -> agent", "sideways", 1), 2, []string{`direction "sideways"`}, "", 1},
		{"unknown_encoding", strings.Replace(header, "%d", "1", 1) + strings.Replace(frame, "utf8", "utf16", 1), 1, []string{`encoding "utf16"`}, "", 0},
		{"unknown_record_type", strings.Replace(header, "%d", "1", 1) + frame + `{"type":"comment"}` + "\n", 1, []string{`unknown trace record type "comment"`}, "", 1},
		{"second_header", strings.Replace(header, "%d", "1", 1) + frame + strings.Replace(header, "%d", "1", 1), 1, []string{"a second trace header"}, "", 1},
		{"cut_off", strings.Replace(header, "%d", "3", 1) + frame, 1, []string{"the header counts 3 frames, the trace holds 1"}, "", 1},
		{"other_version", strings.Replace(strings.Replace(header, "%d", "1", 1), `"version":1`, `"version":2`, 1) + frame, 1, nil, "acp-inspector-trace version 2: this acp-normalize reads version 1", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			recs, bad, err := readRecords(t, tt.in)
			if tt.fatal != "" {
				if err == nil || !strings.Contains(err.Error(), tt.fatal) {
					t.Fatalf("err %v, want %q", err, tt.fatal)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(bad) != len(tt.bad) {
				t.Fatalf("bad lines %v, want %v", bad, tt.bad)
			}
			for i, w := range tt.bad {
				if !strings.Contains(bad[i].Error(), w) {
					t.Errorf("bad line %v, want %q", bad[i], w)
				}
			}
			if len(recs) != tt.recsHas {
				t.Errorf("%d records, want %d", len(recs), tt.recsHas)
			}
		})
	}
}

// TestTraceNotDetected: a capture whose first record merely mentions the
// format's name is read as a capture.
func TestTraceNotDetected(t *testing.T) {
	in := `{"from":"client","frame":{"jsonrpc":"2.0","method":"x","params":{"type":"header","format":"acp-inspector-trace"}}}` + "\n"
	recs, bad, err := readRecords(t, in)
	if err != nil || len(bad) > 0 || len(recs) != 1 || recs[0].From != Client || recs[0].Conn != 0 {
		t.Fatalf("recs %+v bad %v err %v", recs, bad, err)
	}
}

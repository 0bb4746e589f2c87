package route

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite"
)

// TestBeginLong pins which long frames pass on as they arrive and which
// are held whole (F3), decided on their head.
func TestBeginLong(t *testing.T) {
	text := strings.Repeat("x", 4096)
	tests := []struct {
		name   string
		from   pipe.Side
		head   string
		policy NonJSONPolicy
		init   bool // the client's initialize is unanswered
		want   LongAction
	}{
		{"a message chunk", pipe.Agent, `{"jsonrpc":"2.0","method":"session/update","params":{"update":{"text":"` + text, DropNonJSON, false, LongForward},
		{"a module's trigger in the head", pipe.Agent, `{"jsonrpc":"2.0","method":"test/replace","params":{"x":"` + text, DropNonJSON, false, LongHold},
		{"an agent response", pipe.Agent, `{"jsonrpc":"2.0","id":1,"result":{"content":"` + text, DropNonJSON, false, LongForward},
		{"an agent response while initialize is open", pipe.Agent, `{"jsonrpc":"2.0","id":1,"result":{"content":"` + text, DropNonJSON, true, LongHold},
		{"an agent request while initialize is open", pipe.Agent, `{"jsonrpc":"2.0","id":1,"method":"fs/write_text_file","params":{"content":"` + text, DropNonJSON, true, LongForward},
		{"the client's initialize", pipe.Client, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"x":"` + text, DropNonJSON, false, LongHold},
		{"a client response", pipe.Client, `{"jsonrpc":"2.0","id":3,"result":{"content":"` + text, DropNonJSON, false, LongForward},
		{"not JSON, dropped", pipe.Agent, `Traceback ` + text, DropNonJSON, false, LongDrop},
		{"not JSON, forwarded", pipe.Agent, `Traceback ` + text, ForwardNonJSON, false, LongForward},
		{"blanks only", pipe.Agent, strings.Repeat(" ", 5000), DropNonJSON, false, LongDrop},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := NewRouter(RouterConfig{Modules: []rewrite.Module{newTestModule()}, NonJSON: tt.policy})
			if err != nil {
				t.Fatal(err)
			}
			if tt.init {
				r.Handle(pipe.Client, []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`), nil)
			}
			var l Long
			if got := r.BeginLong(tt.from, []byte(tt.head), &l); got != tt.want {
				t.Fatalf("BeginLong = %d, want %d", got, tt.want)
			}
		})
	}
}

// A forwarded long answer to a client request, whose id comes only after
// its huge result, still forgets the request (F6): the agent's exit then
// answers nothing twice.
func TestLongAnswerForgetsTheRequest(t *testing.T) {
	r, err := NewRouter(RouterConfig{})
	if err != nil {
		t.Fatal(err)
	}
	r.Handle(pipe.Client, []byte(`{"jsonrpc":"2.0","id":"q\"1","method":"x/long","params":{}}`), nil)
	var l Long
	if got := r.BeginLong(pipe.Agent, []byte(`{"jsonrpc":"2.0","result":{"text":"`+strings.Repeat("\\\"", 3000)), &l); got != LongForward {
		t.Fatalf("BeginLong = %d", got)
	}
	for _, p := range []string{strings.Repeat("y", 5000), `\\`, `"},`, `"i`, `d":"q\"`, `1"}`} {
		r.LongPiece(&l, []byte(p))
	}
	r.EndLong(&l)
	if n := r.Pending(); n != 0 {
		t.Fatalf("%d requests pending after their answer", n)
	}
}

// A module's trigger split across two pieces after the head is still
// found (the scan overlaps the pieces), and logged: the frame had passed
// on already, so no module saw it (F3).
func TestLongTriggerAcrossPieces(t *testing.T) {
	var logs bytes.Buffer
	r, err := NewRouter(RouterConfig{Modules: []rewrite.Module{newTestModule()},
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	var l Long
	if got := r.BeginLong(pipe.Agent, []byte(`{"jsonrpc":"2.0","params":{"text":"`+strings.Repeat("z", 5000)), &l); got != LongForward {
		t.Fatalf("BeginLong = %d", got)
	}
	for _, p := range []string{`"},"x":"`, `zz"`, `,"method":"te`, `st/replace"}`} {
		r.LongPiece(&l, []byte(p))
	}
	r.EndLong(&l)
	if !strings.Contains(logs.String(), "trigger came after the first window") || !strings.Contains(logs.String(), "modules=[test]") {
		t.Fatalf("logs: %s", logs.String())
	}
}

// A long client request is remembered as soon as its head has its id and
// method (F6): the relay may then block passing the rest on to an agent
// that does not read, whose exit must answer it.
func TestLongRequestRememberedAtItsHead(t *testing.T) {
	r, err := NewRouter(RouterConfig{})
	if err != nil {
		t.Fatal(err)
	}
	var l Long
	if got := r.BeginLong(pipe.Client, []byte(`{"jsonrpc":"2.0","id":7,"method":"session/prompt","params":{"text":"`+strings.Repeat("x", 5000)), &l); got != LongForward {
		t.Fatalf("BeginLong = %d", got)
	}
	if n := r.Pending(); n != 1 {
		t.Fatalf("%d requests pending after the head, want 1", n)
	}
	r.LongPiece(&l, []byte(`"}}`))
	r.EndLong(&l)
	if n := r.Pending(); n != 1 {
		t.Fatalf("%d requests pending after the end, want 1", n)
	}
	if outs := r.AgentGone(nil); len(outs) != 1 || !strings.Contains(string(outs[0].Frame), `"id":7`) {
		t.Fatalf("AgentGone: %v", outs)
	}
}

// With --record, long frames are recorded in pieces one at a time: a long
// frame from the other side meanwhile is held, and recorded whole (R1).
func TestLongRecordedOneAtATime(t *testing.T) {
	var out bytes.Buffer
	capture := pipe.NewCaptureWriter(&out, false)
	r, err := NewRouter(RouterConfig{Capture: capture})
	if err != nil {
		t.Fatal(err)
	}
	head := []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"text":"` + strings.Repeat("x", 5000))
	var agent, client Long
	if got := r.BeginLong(pipe.Agent, head, &agent); got != LongForward {
		t.Fatalf("agent's BeginLong = %d", got)
	}
	if got := r.BeginLong(pipe.Client, head, &client); got != LongHold {
		t.Fatalf("client's BeginLong while the agent's frame is recorded = %d, want LongHold", got)
	}
	r.LongPiece(&agent, []byte(`"}}`))
	r.EndLong(&agent)
	if got := r.BeginLong(pipe.Client, head, &client); got != LongForward {
		t.Fatalf("client's BeginLong after = %d", got)
	}
	r.LongPiece(&client, []byte(`"}}`))
	r.EndLong(&client)
	if err := capture.Close(); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out.String(), `"text":"{\"jsonrpc\"`); n != 2 {
		t.Fatalf("%d text records, want 2: %.300s", n, out.String())
	}
}

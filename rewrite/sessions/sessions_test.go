package sessions_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"testing"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite/rewritetest"
	"github.com/acp-normalize/acp-normalize/route"
)

// frames of a Claude flat launch with one child frame, for an opted-in
// client (the synthesized child is acp-normalize-subagent-e7c8...).
const (
	optedInInit = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"subagents":{}}}}`
	plainInit   = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`
	initResult  = `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{}}}`
	launchCall  = `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call","toolCallId":"toolu_1","name":"Agent","title":"Copy","kind":"think","status":"pending","rawInput":{"description":"Copy","prompt":"Copy it"},"_meta":{"claudeCode":{"toolName":"Agent"}}}}}`
	childID     = "acp-normalize-subagent-e7c8d5f8a597e5b722604bae"
)

func newRouter(t *testing.T, logs *rewritetest.LogRecorder) *route.Router {
	t.Helper()
	r, err := route.NewRouter(route.RouterConfig{Modules: modules(), Logger: logs.Logger(), Version: "0"})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestS5CancelOnAChildWarns: a session/cancel for a synthesized child
// does nothing (the agent has no such session): it is dropped and the
// user is told at warn, each time (each is a user action that did
// nothing).
func TestS5CancelOnAChildWarns(t *testing.T) {
	logs := rewritetest.NewLogRecorder()
	r := newRouter(t, logs)
	r.Handle(pipe.Client, []byte(optedInInit), nil)
	r.Handle(pipe.Agent, []byte(initResult), nil)
	r.Handle(pipe.Agent, []byte(launchCall), nil)
	cancel := `{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"` + childID + `"}}`
	for range 2 {
		if outs := r.Handle(pipe.Client, []byte(cancel), nil); len(outs) != 0 {
			t.Fatalf("session/cancel on a synthesized child reached %s: %s", outs[0].To, outs[0].Frame)
		}
	}
	if got := logs.Find(slog.LevelWarn, "read-only subagent session"); len(got) != 2 {
		t.Errorf("%d warn lines for two dropped cancels, want 2", len(got))
	}
}

// TestS7LoggedOncePerSession: a hidden child's notifications are dropped
// with one info line per session, not one per frame.
func TestS7LoggedOncePerSession(t *testing.T) {
	logs := rewritetest.NewLogRecorder()
	r := newRouter(t, logs)
	r.Handle(pipe.Client, []byte(plainInit), nil)
	r.Handle(pipe.Agent, []byte(initResult), nil)
	for _, child := range []string{"c1", "c2"} {
		r.Handle(pipe.Agent, []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"subagent_update","sessionId":"`+child+`","state":{"state":"running"}}}}`), nil)
		for i := range 3 {
			chunk := fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"%s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"%d"}}}}`, child, i)
			if outs := r.Handle(pipe.Agent, []byte(chunk), nil); len(outs) != 0 {
				t.Fatalf("a hidden child's chunk reached the client: %s", outs[0].Frame)
			}
		}
	}
	if got := logs.Find(slog.LevelInfo, "never told of are dropped"); len(got) != 2 {
		t.Errorf("%d info lines for two hidden sessions, want one each", len(got))
	}
}

// TestP6SessionState: the module's state is capped (P6): a thousand
// launch calls of one session, each announced with a child (S4); a
// client request naming the latest child the proxy made gets -32602
// (S5); after the session's session/close nothing of it is kept, so the
// same request is no longer the proxy's: it reaches the agent, which
// answers for the sessions it has (S5 decides by what the proxy holds,
// not by the id's shape).
func TestP6SessionState(t *testing.T) {
	logs := rewritetest.NewLogRecorder()
	r, err := route.NewRouter(route.RouterConfig{Modules: modules(), Logger: logs.Logger(), Version: "0", MaxEntries: 16})
	if err != nil {
		t.Fatal(err)
	}
	r.Handle(pipe.Client, []byte(optedInInit), nil)
	r.Handle(pipe.Agent, []byte(initResult), nil)
	announced, latest := 0, ""
	for i := range 1000 {
		call := bytes.ReplaceAll([]byte(launchCall), []byte("toolu_1"), []byte(fmt.Sprintf("toolu_%d", i)))
		for _, o := range r.Handle(pipe.Agent, call, nil) {
			if bytes.Contains(o.Frame, []byte(`"subagent_update"`)) {
				announced++
				latest, _ = rawjson.LookupString(o.Frame, "params", "update", "sessionId")
			}
		}
	}
	if announced != 1000 {
		t.Fatalf("%d children announced for 1000 launch calls", announced)
	}
	prompt := `{"jsonrpc":"2.0","id":10,"method":"session/prompt","params":{"sessionId":"` + latest + `","prompt":[]}}`
	outs := r.Handle(pipe.Client, []byte(prompt), nil)
	if len(outs) != 1 || outs[0].To != pipe.Client || !bytes.Contains(outs[0].Frame, []byte(`-32602`)) {
		t.Fatalf("a request on a child the proxy holds: %v", outs)
	}
	r.Handle(pipe.Client, []byte(`{"jsonrpc":"2.0","id":9,"method":"session/close","params":{"sessionId":"s1"}}`), nil)
	outs = r.Handle(pipe.Client, []byte(prompt), nil)
	if len(outs) != 1 || outs[0].To != pipe.Agent {
		t.Fatalf("a request on a closed session's child: %v", outs)
	}
	if recs := logs.Find(slog.LevelError, ""); len(recs) > 0 {
		t.Errorf("error logged: %s", recs[0].Message)
	}
}

// FuzzSessions feeds arbitrary frames, from either side, after an
// opted-in initialize (or JetBrains AIR's with native child sessions,
// J1) and a launch call with a child, through the whole module list: the router must not panic, a valid JSON frame is never
// turned into invalid JSON, and a frame forwarded as it is keeps its
// bytes (P1, P5).
func FuzzSessions(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call_update","toolCallId":"toolu_1","content":[{"type":"content"}],"_meta":{"claudeCode":{"toolName":"Agent"}}}}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","_meta":{"claudeCode":{"parentToolUseId":"toolu_1"}}}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"session/request_permission","params":{"sessionId":"s1","toolCall":{"toolCallId":"x","_meta":{"acp-normalize":{"parentToolCallId":"toolu_1"}}}}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"subagent_spawned","subagentSessionId":"c","_meta":{"cursor":{"toolCallId":"toolu_1"}}}}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"c","update":{"sessionUpdate":"subagent_state_update","state":"completed"}}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call","toolCallId":"t","_meta":{"acp-normalize":{"subagent":{"vendor":7}}}}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"` + childID + `"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"fs/read_text_file","params":{"sessionId":"c"}}`,
	} {
		f.Add([]byte(s), false, false)
		f.Add([]byte(s), false, true)
	}
	f.Add([]byte(`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"`+childID+`"}}`), true, false)
	f.Add([]byte(`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"_meta":{"jetbrains":{"air":{"capabilities":[1]}}}}}`), false, true)
	f.Fuzz(func(t *testing.T, frame []byte, fromClient, air bool) {
		r, err := route.NewRouter(route.RouterConfig{Modules: modules(), Version: "0"})
		if err != nil {
			t.Fatal(err)
		}
		init := optedInInit
		if air {
			init = airNativeInit
		}
		for _, p := range []struct {
			from  pipe.Side
			frame string
		}{{pipe.Client, init}, {pipe.Agent, initResult}, {pipe.Agent, launchCall}} {
			r.Handle(p.from, []byte(p.frame), nil)
		}
		from := pipe.Agent
		if fromClient {
			from = pipe.Client
		}
		in := bytes.Clone(frame)
		for _, o := range r.Handle(from, frame, nil) {
			if o.Op == "" && !bytes.Equal(o.Frame, in) {
				t.Fatalf("P1: a forwarded frame changed:\n%s\n%s", in, o.Frame)
			}
			if json.Valid(in) && !json.Valid(o.Frame) {
				t.Fatalf("invalid JSON written for %s:\n%s", in, o.Frame)
			}
		}
	})
}

// TestS7ManyHiddenChildrenNoneStranded: a client that did not opt in,
// and more hidden children at once than the module watches one by one
// (an agent with many parallel subagents sending child sessions
// unasked). The first child's permission request still goes to the
// parent session the client knows (S7), and its chunks are still
// dropped: no child loses S7 because later ones came (P6 bounds the
// state, not which children S7 covers).
func TestS7ManyHiddenChildrenNoneStranded(t *testing.T) {
	logs := rewritetest.NewLogRecorder()
	r := newRouter(t, logs)
	r.Handle(pipe.Client, []byte(plainInit), nil)
	r.Handle(pipe.Agent, []byte(initResult), nil)
	const children = 100
	for i := range children {
		r.Handle(pipe.Agent, []byte(fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"subagent_update","sessionId":"child%d","state":{"state":"running"}}}}`, i)), nil)
	}
	for _, i := range []int{0, children / 2, children - 1} {
		chunk := fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"child%d","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}}`, i)
		if outs := r.Handle(pipe.Agent, []byte(chunk), nil); len(outs) != 0 {
			t.Errorf("child%d: a hidden child's chunk reached the client: %s", i, outs[0].Frame)
		}
		ask := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"session/request_permission","params":{"sessionId":"child%d","toolCall":{"toolCallId":"t"},"options":[]}}`, i+1, i)
		outs := r.Handle(pipe.Agent, []byte(ask), nil)
		if len(outs) != 1 || outs[0].To != pipe.Client {
			t.Fatalf("child%d: permission request gave %v", i, outs)
		}
		var got struct {
			ID     int `json:"id"`
			Params struct {
				SessionID string `json:"sessionId"`
				ToolCall  struct {
					Meta map[string]map[string]string `json:"_meta"`
				} `json:"toolCall"`
			} `json:"params"`
		}
		if err := json.Unmarshal(outs[0].Frame, &got); err != nil {
			t.Fatal(err)
		}
		if got.ID != i+1 || got.Params.SessionID != "s1" || got.Params.ToolCall.Meta["acp-normalize"]["childSessionId"] != fmt.Sprintf("child%d", i) {
			t.Errorf("child%d: permission request not re-homed onto s1 with its id kept: %s", i, outs[0].Frame)
		}
	}
}

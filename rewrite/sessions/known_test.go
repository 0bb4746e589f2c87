package sessions_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite/rewritetest"
	"github.com/acp-normalize/acp-normalize/route"
)

// handshake opens a connection: the client's initialize, the agent's
// answer, and a session/new the agent answers with sid.
func handshake(t *testing.T, r *route.Router, init string, sids ...string) {
	t.Helper()
	r.Handle(pipe.Client, []byte(init), nil)
	r.Handle(pipe.Agent, []byte(initResult), nil)
	for i, sid := range sids {
		r.Handle(pipe.Client, []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"session/new","params":{"cwd":"/w","mcpServers":[]}}`, i+1)), nil)
		r.Handle(pipe.Agent, []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"sessionId":%q}}`, i+1, sid)), nil)
	}
}

func chunkOn(sid, text string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":%q,"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":%q}}}}`, sid, text)
}

func reached(outs []route.Out, to pipe.Side, text string) bool {
	for _, o := range outs {
		if o.To == to && bytes.Contains(o.Frame, []byte(text)) {
			return true
		}
	}
	return false
}

// TestS7ClientSessionNeverHidden: a session the client created can never
// become a hidden child (S7, P1): an agent that announces the client's
// own session as a child, by subagent_update or by a draft, on that
// session itself or on another of the client's sessions, must not make
// the proxy drop the session's later notifications.
func TestS7ClientSessionNeverHidden(t *testing.T) {
	tests := []struct{ name, announce string }{
		{"subagent_update of the session on itself", `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"S","update":{"sessionUpdate":"subagent_update","sessionId":"S","state":{"state":"running"}}}}`},
		{"subagent_update of the session on another", `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"T","update":{"sessionUpdate":"subagent_update","sessionId":"S","state":{"state":"running"}}}}`},
		{"draft of the session on itself", `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"S","update":{"sessionUpdate":"subagent_spawned","subagentSessionId":"S","name":"x","task":"y","capabilities":{}}}}`},
		{"draft of the session on another", `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"T","update":{"sessionUpdate":"subagent_spawned","subagentSessionId":"S","name":"x","task":"y","capabilities":{}}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRouter(t, rewritetest.NewLogRecorder())
			handshake(t, r, plainInit, "S", "T")
			r.Handle(pipe.Agent, []byte(tt.announce), nil)
			if outs := r.Handle(pipe.Agent, []byte(chunkOn("S", "LOST")), nil); !reached(outs, pipe.Client, "LOST") {
				t.Fatalf("a notification on the client's own session S was dropped after the agent announced S as a child")
			}
			ask := `{"jsonrpc":"2.0","id":7,"method":"session/request_permission","params":{"sessionId":"S","toolCall":{"toolCallId":"t"},"options":[]}}`
			outs := r.Handle(pipe.Agent, []byte(ask), nil)
			if len(outs) != 1 || !bytes.Equal(outs[0].Frame, []byte(ask)) {
				t.Fatalf("a permission request on the client's own session S was changed: %v", outs)
			}
		})
	}
}

// TestS7LoadedSessionNeverHidden: the sessions the client names itself
// (session/load, session/resume, session/prompt) are the client's too,
// whether it names one before or after the agent announced it as a
// child (a client that loads a child session to show it, as Zed does).
func TestS7LoadedSessionNeverHidden(t *testing.T) {
	for _, method := range []string{"session/load", "session/resume", "session/prompt"} {
		for _, named := range []string{"before", "after"} {
			t.Run(method+"/"+named, func(t *testing.T) {
				r := newRouter(t, rewritetest.NewLogRecorder())
				handshake(t, r, plainInit, "T")
				name := `{"jsonrpc":"2.0","id":5,"method":"` + method + `","params":{"sessionId":"S","cwd":"/w","mcpServers":[],"prompt":[]}}`
				announce := `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"T","update":{"sessionUpdate":"subagent_update","sessionId":"S","state":{"state":"running"}}}}`
				if named == "before" {
					r.Handle(pipe.Client, []byte(name), nil)
					r.Handle(pipe.Agent, []byte(announce), nil)
				} else {
					r.Handle(pipe.Agent, []byte(announce), nil)
					r.Handle(pipe.Client, []byte(name), nil)
				}
				if outs := r.Handle(pipe.Agent, []byte(chunkOn("S", "LOST")), nil); !reached(outs, pipe.Client, "LOST") {
					t.Fatalf("a notification on session S, which the client named in %s, was dropped", method)
				}
			})
		}
	}
}

// TestS7OptedInClientSessionNotAChild: for an opted-in client, a session
// of the client's the agent announces as the child of another is not
// taken for one: closing the other session leaves the first one's
// launch calls alone (P6 drops a closed session's children), so its
// launch call keeps its one child (S4).
func TestS7OptedInClientSessionNotAChild(t *testing.T) {
	r := newRouter(t, rewritetest.NewLogRecorder())
	handshake(t, r, optedInInit, "A", "s1")
	r.Handle(pipe.Agent, []byte(launchCall), nil)
	r.Handle(pipe.Agent, []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"A","update":{"sessionUpdate":"subagent_update","sessionId":"s1","state":{"state":"running"}}}}`), nil)
	r.Handle(pipe.Client, []byte(`{"jsonrpc":"2.0","id":9,"method":"session/close","params":{"sessionId":"A"}}`), nil)
	update := strings.Replace(launchCall, `"sessionUpdate":"tool_call"`, `"sessionUpdate":"tool_call_update"`, 1)
	for _, o := range r.Handle(pipe.Agent, []byte(update), nil) {
		if bytes.Contains(o.Frame, []byte(`"subagent_update"`)) && bytes.Contains(o.Frame, []byte(`"title"`)) {
			t.Fatalf("the launch call of s1 got a second child after the client closed A: %s", o.Frame)
		}
	}
}

// TestS7RehomedAtAnyDepth: a request of a hidden child 40 levels below
// the client's session goes to that session (S7: the first ancestor the
// client knows, at any depth), and a cycle of hidden children ends the
// walk.
func TestS7RehomedAtAnyDepth(t *testing.T) {
	r := newRouter(t, rewritetest.NewLogRecorder())
	handshake(t, r, plainInit, "root")
	parent := "root"
	const depth = 40
	for i := range depth {
		child := fmt.Sprintf("c%d", i)
		r.Handle(pipe.Agent, []byte(fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":%q,"update":{"sessionUpdate":"subagent_update","sessionId":%q}}}`, parent, child)), nil)
		parent = child
	}
	ask := fmt.Sprintf(`{"jsonrpc":"2.0","id":3,"method":"session/request_permission","params":{"sessionId":"c%d","toolCall":{"toolCallId":"t"},"options":[]}}`, depth-1)
	outs := r.Handle(pipe.Agent, []byte(ask), nil)
	if len(outs) != 1 || !bytes.Contains(outs[0].Frame, []byte(`"sessionId":"root"`)) {
		t.Fatalf("a request %d levels deep did not reach the client's session: %v", depth, outs)
	}
	// A cycle: x is announced on y and y on x, both hidden, neither the
	// client's: the walk ends, and the request goes to one of them.
	r.Handle(pipe.Agent, []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"y","update":{"sessionUpdate":"subagent_update","sessionId":"x"}}}`), nil)
	r.Handle(pipe.Agent, []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"x","update":{"sessionUpdate":"subagent_update","sessionId":"y"}}}`), nil)
	if outs := r.Handle(pipe.Agent, []byte(strings.Replace(ask, fmt.Sprintf("c%d", depth-1), "x", 1)), nil); len(outs) != 1 {
		t.Fatalf("a request in a cycle of hidden children: %v", outs)
	}
}

// TestS5OwnChildByWhatTheProxyMade: a child session of the agent's own
// whose id looks like one the proxy makes is the agent's: the client's
// requests and notifications on it reach the agent (S3, S5 decide by
// what the proxy made on the connection, not by the id's shape).
func TestS5OwnChildByWhatTheProxyMade(t *testing.T) {
	const lookalike = "acp-normalize-subagent-0123456789abcdef01234567"
	r := newRouter(t, rewritetest.NewLogRecorder())
	handshake(t, r, optedInInit, "s1")
	r.Handle(pipe.Agent, []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"subagent_update","sessionId":"`+lookalike+`","capabilities":{"cancel":{}},"state":{"state":"running"}}}}`), nil)
	for _, frame := range []string{
		`{"jsonrpc":"2.0","id":11,"method":"session/prompt","params":{"sessionId":"` + lookalike + `","prompt":[]}}`,
		`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"` + lookalike + `"}}`,
	} {
		outs := r.Handle(pipe.Client, []byte(frame), nil)
		if len(outs) != 1 || outs[0].To != pipe.Agent || !bytes.Equal(outs[0].Frame, []byte(frame)) {
			t.Errorf("a client frame on the agent's own child did not reach the agent unchanged: %s -> %v", frame, outs)
		}
	}
}

// TestS5DraftCannotTakeTheProxysChild: a draft that names a child the
// proxy made as the agent's own does not take it over: the client's
// request on that child is still answered by the proxy (S5), since the
// agent has no such session.
func TestS5DraftCannotTakeTheProxysChild(t *testing.T) {
	r := newRouter(t, rewritetest.NewLogRecorder())
	handshake(t, r, optedInInit, "s1")
	r.Handle(pipe.Agent, []byte(launchCall), nil)
	r.Handle(pipe.Agent, []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"subagent_spawned","subagentSessionId":"`+childID+`","name":"x","task":"y","capabilities":{}}}}`), nil)
	outs := r.Handle(pipe.Client, []byte(`{"jsonrpc":"2.0","id":12,"method":"session/prompt","params":{"sessionId":"`+childID+`","prompt":[]}}`), nil)
	if len(outs) != 1 || outs[0].To != pipe.Client || !bytes.Contains(outs[0].Frame, []byte(`-32602`)) {
		t.Fatalf("a request on the proxy's child after a draft named it: %v", outs)
	}
}

// TestS4DraftCannotEndTheProxysChild: a draft end naming a child the
// proxy made does not end it: its state follows its launch call (S4).
func TestS4DraftCannotEndTheProxysChild(t *testing.T) {
	r := newRouter(t, rewritetest.NewLogRecorder())
	handshake(t, r, optedInInit, "s1")
	r.Handle(pipe.Agent, []byte(launchCall), nil)
	outs := r.Handle(pipe.Agent, []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"subagent_state_update","subagentSessionId":"`+childID+`","state":"completed"}}}`), nil)
	for _, o := range outs {
		if bytes.Contains(o.Frame, []byte(`"idle"`)) || bytes.Contains(o.Frame, []byte(`"completed"`)) {
			t.Errorf("a draft ended the proxy's child of a pending call: %s", o.Frame)
		}
	}
}

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

// Attacks on the module from a hostile agent, a hostile client and a
// demanding user: what each case pins is in its name.

// TestS4TurnEndAnswerSpellings: the agent's answer to session/prompt ends
// the turn's foreground children (S4) however the answer spells what the
// module reads: the id by its value (pipe.IDKey: 1E2 is 100, a string
// "4" is not 4), an error member with blanks around its colon (legal
// JSON, what Python's json.dumps writes).
func TestS4TurnEndAnswerSpellings(t *testing.T) {
	tests := []struct {
		name, id, answer string
		idle             bool
	}{
		{"the same id", `100`, `{"jsonrpc":"2.0","id":100,"result":{"stopReason":"end_turn"}}`, true},
		{"100 answered as 1E2", `100`, `{"jsonrpc":"2.0","id":1E2,"result":{"stopReason":"end_turn"}}`, true},
		{"1 answered as 1.0", `1`, `{"jsonrpc":"2.0","id":1.0,"result":{"stopReason":"end_turn"}}`, true},
		{"a string id escaped", `"p-1"`, `{"jsonrpc":"2.0","id":"p\u002d1","result":{"stopReason":"end_turn"}}`, true},
		{"an error answer", `100`, `{"jsonrpc":"2.0","id":100,"error":{"code":-32603,"message":"model overloaded"}}`, true},
		{"an error answer with blanks", `100`, `{"jsonrpc":"2.0","id":100,"error": {"code":-32603,"message":"model overloaded"}}`, true},
		{"an error answer spaced out", `100`, "{\"jsonrpc\": \"2.0\", \"id\": 100, \"error\" :\n {\"code\": -32603, \"message\": \"model overloaded\"}}", true},
		{"a string id is no number", `"100"`, `{"jsonrpc":"2.0","id":100,"result":{"stopReason":"end_turn"}}`, false},
		{"another id", `100`, `{"jsonrpc":"2.0","id":101,"result":{"stopReason":"end_turn"}}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRouter(t, rewritetest.NewLogRecorder())
			handshake(t, r, optedInInit, "s1")
			r.Handle(pipe.Client, []byte(`{"jsonrpc":"2.0","id":`+tt.id+`,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}`), nil)
			r.Handle(pipe.Agent, []byte(launchCall), nil)
			outs := r.Handle(pipe.Agent, []byte(tt.answer), nil)
			idle := false
			for _, o := range outs {
				if bytes.Contains(o.Frame, []byte(`"subagent_update"`)) && bytes.Contains(o.Frame, []byte(`"idle"`)) {
					idle = true
				}
			}
			if idle != tt.idle {
				t.Errorf("the foreground child went idle: %v, want %v\n%v", idle, tt.idle, outs)
			}
		})
	}
}

// TestS7BusiestSessionStaysKnown: the client's sessions are the last
// ones it named (S7, P6: the last 1,024), so the session it prompts
// turn after turn is never the one forgotten when it names many others
// (a client loading its history): the agent cannot then hide it.
func TestS7BusiestSessionStaysKnown(t *testing.T) {
	r, err := route.NewRouter(route.RouterConfig{Modules: modules(), Logger: rewritetest.NewLogRecorder().Logger(), Version: "0", MaxEntries: 4})
	if err != nil {
		t.Fatal(err)
	}
	handshake(t, r, plainInit, "S")
	prompt := func(id int) {
		r.Handle(pipe.Client, []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"session/prompt","params":{"sessionId":"S","prompt":[]}}`, id)), nil)
	}
	load := func(i int) {
		r.Handle(pipe.Client, []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"session/load","params":{"sessionId":"old-%d","cwd":"/w","mcpServers":[]}}`, 100+i, i)), nil)
	}
	// Named, oldest first: S, old-0, old-1, old-2, S, old-9: S is among
	// the last four.
	prompt(10)
	load(0)
	load(1)
	load(2)
	prompt(11)
	load(9)
	r.Handle(pipe.Agent, []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"old-9","update":{"sessionUpdate":"subagent_update","sessionId":"S","state":{"state":"running"}}}}`), nil)
	if outs := r.Handle(pipe.Agent, []byte(chunkOn("S", "LOST")), nil); !reached(outs, pipe.Client, "LOST") {
		t.Fatal("a notification on the session the client prompts every turn was dropped: it was forgotten as the oldest it named")
	}
}

// TestS4TurnEndIsNotUndone: a foreground child the turn's answer ended
// (S4) is not revived by a late frame of its launch call that still says
// it works (an agent's stray update after a cancelled turn): the child
// stays idle; a late end still gives its stop reason.
func TestS4TurnEndIsNotUndone(t *testing.T) {
	late := func(status string) string {
		return `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call_update","toolCallId":"toolu_1","status":"` + status + `","_meta":{"claudeCode":{"toolName":"Agent"}}}}}`
	}
	for _, tt := range []struct {
		name, status, want string
	}{
		{"a late in_progress", "in_progress", ""},
		{"a late pending", "pending", ""},
		{"a late completed", "completed", `"state":{"state":"idle","stopReason":"end_turn"}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := newRouter(t, rewritetest.NewLogRecorder())
			handshake(t, r, optedInInit, "s1")
			r.Handle(pipe.Client, []byte(`{"jsonrpc":"2.0","id":9,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}`), nil)
			r.Handle(pipe.Agent, []byte(launchCall), nil)
			r.Handle(pipe.Client, []byte(`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s1"}}`), nil)
			if outs := r.Handle(pipe.Agent, []byte(`{"jsonrpc":"2.0","id":9,"result":{"stopReason":"cancelled"}}`), nil); !reached(outs, pipe.Client, `"stopReason":"cancelled"}}}`) {
				t.Fatalf("the turn's answer did not end the child: %v", outs)
			}
			outs := r.Handle(pipe.Agent, []byte(late(tt.status)), nil)
			if reached(outs, pipe.Client, `"subagent_update","sessionId":"`+childID+`","state":{"state":"running"}`) {
				t.Errorf("the ended child was revived:\n%s", framesOf(outs))
			}
			if tt.want != "" && !reached(outs, pipe.Client, tt.want) {
				t.Errorf("the late end did not reach the client as %s:\n%s", tt.want, framesOf(outs))
			}
		})
	}
}

// framesOf returns the frames of outs, one a line.
func framesOf(outs []route.Out) string {
	var b strings.Builder
	for _, o := range outs {
		fmt.Fprintf(&b, "%s %s\n", o.To, o.Frame)
	}
	return b.String()
}

// TestS7NewSessionIsTheClientsWhateverCameBefore: a session a session/new
// answer gives the client is the client's even when the agent announced
// it as a child before answering, and so is its tree: closing the
// session that announced it drops none of its state, its children's
// included (S7, P6: a launch call whose state was dropped would get a
// second child).
func TestS7NewSessionIsTheClientsWhateverCameBefore(t *testing.T) {
	for _, on := range []string{"S", "S2"} {
		t.Run("a launch call on "+on, func(t *testing.T) {
			r := newRouter(t, rewritetest.NewLogRecorder())
			handshake(t, r, optedInInit, "T")
			announce := func(parent, kid string) {
				r.Handle(pipe.Agent, []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"`+parent+`","update":{"sessionUpdate":"subagent_update","sessionId":"`+kid+`","state":{"state":"running"}}}}`), nil)
			}
			announce("T", "S")
			announce("S", "S2")
			r.Handle(pipe.Client, []byte(`{"jsonrpc":"2.0","id":7,"method":"session/new","params":{"cwd":"/w","mcpServers":[]}}`), nil)
			r.Handle(pipe.Agent, []byte(`{"jsonrpc":"2.0","id":7,"result":{"sessionId":"S"}}`), nil)
			call := strings.Replace(launchCall, `"sessionId":"s1"`, `"sessionId":"`+on+`"`, 1)
			r.Handle(pipe.Agent, []byte(call), nil)
			r.Handle(pipe.Client, []byte(`{"jsonrpc":"2.0","id":9,"method":"session/close","params":{"sessionId":"T"}}`), nil)
			update := strings.Replace(call, `"sessionUpdate":"tool_call"`, `"sessionUpdate":"tool_call_update"`, 1)
			for _, o := range r.Handle(pipe.Agent, []byte(update), nil) {
				if bytes.Contains(o.Frame, []byte(`"subagent_update"`)) && bytes.Contains(o.Frame, []byte(`"title"`)) {
					t.Fatalf("the launch call on %s got a second child after the client closed T: %s", on, o.Frame)
				}
			}
		})
	}
}

// TestZ3ReplayEndsByIDValue: the agent's answer to a session/load ends
// that session's replay whatever spelling of the request's id it uses
// (pipe.IDKey: 1E2 is 100, "\u0031" is "1"): after it, a new launch
// call is live, not replayed (Z3), so it carries no child key Zed would
// load before the child exists.
func TestZ3ReplayEndsByIDValue(t *testing.T) {
	call := func(tc string) string {
		return `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call","toolCallId":"` + tc + `","title":"t","rawInput":{"prompt":"p"},"_meta":{"claudeCode":{"toolName":"Agent"}}}}}`
	}
	for _, tt := range []struct{ name, id, answerID string }{
		{"the same id", `100`, `100`},
		{"100 answered as 1E2", `100`, `1E2`},
		{"a string id escaped", `"1"`, `"\u0031"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := newRouter(t, rewritetest.NewLogRecorder())
			r.Handle(pipe.Client, []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientInfo":{"name":"zed"}}}`), nil)
			r.Handle(pipe.Agent, []byte(`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{"loadSession":true}}}`), nil)
			r.Handle(pipe.Client, []byte(`{"jsonrpc":"2.0","id":`+tt.id+`,"method":"session/load","params":{"sessionId":"s1","cwd":"/w","mcpServers":[]}}`), nil)
			if outs := r.Handle(pipe.Agent, []byte(call("toolu_old")), nil); !reached(outs, pipe.Client, `"subagent_session_info"`) {
				t.Fatalf("the replayed launch call has no child key:\n%s", framesOf(outs))
			}
			r.Handle(pipe.Agent, []byte(`{"jsonrpc":"2.0","id":`+tt.answerID+`,"result":{}}`), nil)
			if outs := r.Handle(pipe.Agent, []byte(call("toolu_new")), nil); reached(outs, pipe.Client, `"subagent_session_info"`) {
				t.Errorf("a live launch call after the load's answer is taken for a replayed one:\n%s", framesOf(outs))
			}
		})
	}
}

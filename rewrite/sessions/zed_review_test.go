package sessions_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"testing"
	"unicode/utf8"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/route"
)

// zedConn is one Zed connection through the whole module list, for the
// attacks on rules Z1-Z4 below.
type zedConn struct {
	t *testing.T
	r *route.Router
}

const (
	zedInit       = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientInfo":{"name":"zed"}}}`
	loadAgentInit = `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{"loadSession":true}}}`
)

func newZedConn(t *testing.T, clientInit, agentInit string) *zedConn {
	return newZedConnWith(t, nil, clientInit, agentInit)
}

func newZedConnWith(t *testing.T, settings rewrite.Settings, clientInit, agentInit string) *zedConn {
	t.Helper()
	r, err := route.NewRouter(route.RouterConfig{Modules: modules(), Version: "0", Settings: settings})
	if err != nil {
		t.Fatal(err)
	}
	c := &zedConn{t: t, r: r}
	c.client(clientInit)
	c.agent(agentInit)
	return c
}

func (c *zedConn) handle(from pipe.Side, frame string) []route.Out {
	c.t.Helper()
	var outs []route.Out
	for _, o := range c.r.Handle(from, []byte(frame), nil) {
		o.Frame = bytes.Clone(o.Frame)
		if !json.Valid(o.Frame) {
			c.t.Errorf("invalid JSON written: %q", o.Frame)
		}
		if !utf8.Valid(o.Frame) {
			c.t.Errorf("invalid UTF-8 written: %q", o.Frame)
		}
		outs = append(outs, o)
	}
	return outs
}

func (c *zedConn) client(frame string) []route.Out { return c.handle(pipe.Client, frame) }
func (c *zedConn) agent(frame string) []route.Out  { return c.handle(pipe.Agent, frame) }

// launchFrame is a Claude launch call of session s1.
func launchFrame(tc string) string {
	return `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call","toolCallId":"` + tc + `","title":"Copy","status":"pending","rawInput":{"description":"Copy","prompt":"Copy it"},"_meta":{"claudeCode":{"toolName":"Agent"}}}}}`
}

// zedLinkedFrame is an update the vendor links to launch call tc; upd is
// the update's fields after sessionUpdate.
func zedLinkedFrame(tc, upd string) string {
	return `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{` + upd + `,"_meta":{"claudeCode":{"parentToolUseId":"` + tc + `"}}}}}`
}

func linkedChunk(tc, text string) string {
	return zedLinkedFrame(tc, `"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":`+string(rawjson.Text(text))+`}`)
}

// childOf returns the child id Zed's key names in outs, "" when none.
func childOf(outs []route.Out) string {
	for _, o := range outs {
		if id, ok := rawjson.LookupString(o.Frame, "params", "update", "_meta", "subagent_session_info", "session_id"); ok {
			return id
		}
	}
	return ""
}

func hasKey(outs []route.Out) bool {
	for _, o := range outs {
		if o.To == pipe.Client && bytes.Contains(o.Frame, []byte(`"subagent_session_info"`)) {
			return true
		}
	}
	return false
}

// reopenS1 plays a reopen of s1 (Z3): the load with id loadID, the
// replay of the launch call tc and its linked chunk, the agent's answer
// with answerID; it returns C.
func (c *zedConn) reopenS1(loadID, answerID, tc string) string {
	c.t.Helper()
	c.client(`{"jsonrpc":"2.0","id":` + loadID + `,"method":"session/load","params":{"sessionId":"s1","cwd":"/","mcpServers":[]}}`)
	child := childOf(c.agent(launchFrame(tc)))
	c.agent(linkedChunk(tc, "replayed"))
	c.agent(`{"jsonrpc":"2.0","id":` + answerID + `,"result":{}}`)
	return child
}

// TestZedReviewLoadIDs: the agent's answer to the parent's session/load
// ends the replay however it spells the client's id (pipe.IDKey, F6):
// else every later live frame of the session would be taken for a
// replay and a live card would get Zed's key, hiding its content (Z1,
// P7). The proxy's own answer to a child's load uses the client's id
// byte for byte (Z2).
func TestZedReviewLoadIDs(t *testing.T) {
	tests := []struct{ name, load, answer string }{
		{"same integer", `7`, `7`},
		{"same string", `"zed-1"`, `"zed-1"`},
		{"escaped string", `"zed\u002d1"`, `"zed-1"`},
		{"exponent", `1E2`, `100`},
		{"trailing zero", `1.50`, `1.5`},
		{"huge integer", `123456789012345678901234567890`, `123456789012345678901234567890`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newZedConn(t, zedInit, loadAgentInit)
			c.agent(launchFrame("toolu_1"))
			child := c.reopenS1(tc.load, tc.answer, "toolu_1")
			if child == "" {
				t.Fatal("Z1: the replayed launch call got no key")
			}
			if outs := c.agent(launchFrame("toolu_2")); hasKey(outs) {
				t.Errorf("Z1: a live launch call after the load's answer (id %s, answered %s) got Zed's key: %s", tc.load, tc.answer, outs[0].Frame)
			}
			outs := c.client(`{"jsonrpc":"2.0","id":` + tc.load + `,"method":"session/load","params":{"sessionId":"` + child + `"}}`)
			last := outs[len(outs)-1].Frame
			if want := `{"jsonrpc":"2.0","id":` + tc.load + `,"result":{}}`; string(last) != want {
				t.Errorf("Z2: the child load's answer:\n got %s\nwant %s", last, want)
			}
		})
	}
}

// permissionFrame is a Claude permission request of a tool call the
// subagent of launch call tc runs.
func permissionFrame(id, tc string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"session/request_permission","params":{"sessionId":"s1","toolCall":{"toolCallId":"t9","title":"Write","_meta":{"claudeCode":{"parentToolUseId":"` + tc + `","toolName":"Write"}}},"options":[{"optionId":"y","name":"Yes","kind":"allow_once"}]}}`
}

func loadFrame(id, sid string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"session/load","params":{"sessionId":"` + sid + `","cwd":"/","mcpServers":[]}}`
}

// childThread returns the texts of the message chunks the proxy sent on
// child in outs, and whether the last frame answers id with {}.
func childThread(outs []route.Out, child, id string) (texts []string, answered bool) {
	for _, o := range outs {
		if o.To != pipe.Client {
			continue
		}
		if s, _ := rawjson.LookupString(o.Frame, "params", "sessionId"); s == child {
			t, _ := rawjson.LookupString(o.Frame, "params", "update", "content", "text")
			texts = append(texts, t)
		}
	}
	return texts, len(outs) > 0 && string(outs[len(outs)-1].Frame) == `{"jsonrpc":"2.0","id":`+id+`,"result":{}}`
}

func sessionOf(o route.Out) string {
	s, _ := rawjson.LookupString(o.Frame, "params", "sessionId")
	return s
}

// TestZedReviewChildThreads attacks Z2 and Z3 with the loads and closes
// a hostile or unusual Zed can send: a child loaded twice, closed and
// loaded again, loaded in the middle of its parent's replay, loaded
// after its parent was closed; a parent load the agent refuses; and the
// permission requests of a subagent, which must always reach a session
// the client holds (a request on one it has not loaded is refused,
// stalling the turn).
func TestZedReviewChildThreads(t *testing.T) {
	tests := []struct {
		name string
		run  func(t *testing.T, c *zedConn)
	}{
		{"the same child loaded twice, concurrently", func(t *testing.T, c *zedConn) {
			c.agent(launchFrame("toolu_1"))
			c.agent(linkedChunk("toolu_1", "live"))
			child := c.reopenS1("1", "1", "toolu_1")
			for _, id := range []string{"5", `"5"`} {
				texts, ok := childThread(c.client(loadFrame(id, child)), child, id)
				if !ok || strings.Join(texts, "|") != "Copy it|replayed" {
					t.Errorf("load %s of the child: answered %v, thread %q", id, ok, texts)
				}
			}
		}},
		{"closed and loaded again: the same thread", func(t *testing.T, c *zedConn) {
			c.agent(launchFrame("toolu_1"))
			child := c.reopenS1("1", "1", "toolu_1")
			c.client(loadFrame("2", child))
			if outs := c.client(`{"jsonrpc":"2.0","id":3,"method":"session/close","params":{"sessionId":"` + child + `"}}`); len(outs) != 1 || string(outs[0].Frame) != `{"jsonrpc":"2.0","id":3,"result":{}}` {
				t.Fatalf("Z2: the close of the child: %v", outs)
			}
			// Released: a live chunk stays on the parent only, and the
			// subagent's permission request goes where Zed can answer it.
			for _, o := range c.agent(linkedChunk("toolu_1", "after close")) {
				if sessionOf(o) == child {
					t.Errorf("Z2: a frame went to the closed child: %s", o.Frame)
				}
			}
			if outs := c.agent(permissionFrame("40", "toolu_1")); len(outs) != 1 || sessionOf(outs[0]) != "s1" {
				t.Errorf("Z2: a permission request after the child's close went to %q", sessionOf(outs[0]))
			}
			texts, ok := childThread(c.client(loadFrame("4", child)), child, "4")
			if !ok || strings.Join(texts, "|") != "Copy it|replayed|after close" {
				t.Errorf("Z2: the child loaded again after its close: answered %v, thread %q", ok, texts)
			}
			if outs := c.agent(permissionFrame("41", "toolu_1")); len(outs) != 1 || sessionOf(outs[0]) != child {
				t.Errorf("Z2: a permission request once the child is loaded again went to %q", sessionOf(outs[0]))
			}
		}},
		{"loaded in the middle of its parent's replay", func(t *testing.T, c *zedConn) {
			c.agent(launchFrame("toolu_1"))
			c.client(loadFrame("1", "s1"))
			child := childOf(c.agent(launchFrame("toolu_1")))
			c.agent(linkedChunk("toolu_1", "first"))
			texts, _ := childThread(c.client(loadFrame("2", child)), child, "2")
			rest, _ := childThread(c.agent(linkedChunk("toolu_1", "second")), child, "")
			c.agent(`{"jsonrpc":"2.0","id":1,"result":{}}`)
			if got := strings.Join(append(texts, rest...), "|"); got != "Copy it|first|second" {
				t.Errorf("Z2, Z3: the child loaded mid-replay holds %q", got)
			}
		}},
		{"loaded after its parent was closed", func(t *testing.T, c *zedConn) {
			c.agent(launchFrame("toolu_1"))
			child := c.reopenS1("1", "1", "toolu_1")
			c.client(`{"jsonrpc":"2.0","id":2,"method":"session/close","params":{"sessionId":"s1"}}`)
			c.agent(`{"jsonrpc":"2.0","id":2,"result":{}}`)
			if outs := c.client(loadFrame("3", child)); len(outs) != 1 || string(outs[0].Frame) != `{"jsonrpc":"2.0","id":3,"result":{}}` {
				t.Errorf("Z2: a child of a closed parent: want {} alone, got %d frames", len(outs))
			}
		}},
		{"the agent refuses the parent's load", func(t *testing.T, c *zedConn) {
			c.agent(launchFrame("toolu_1"))
			c.agent(linkedChunk("toolu_1", "live"))
			c.client(loadFrame("1", "s1"))
			child := childOf(c.agent(launchFrame("toolu_1")))
			c.agent(`{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"no such session"}}`)
			if outs := c.agent(launchFrame("toolu_2")); hasKey(outs) {
				t.Errorf("Z1: a live call after a refused load got the key")
			}
			texts, ok := childThread(c.client(loadFrame("2", child)), child, "2")
			if !ok || strings.Join(texts, "|") != "Copy it|live" {
				t.Errorf("Z2: after a refused load the child holds %q (answered %v)", texts, ok)
			}
		}},
		{"a permission request before the child is loaded stays on the parent", func(t *testing.T, c *zedConn) {
			c.agent(launchFrame("toolu_1"))
			c.reopenS1("1", "1", "toolu_1")
			if outs := c.agent(permissionFrame("40", "toolu_1")); len(outs) != 1 || sessionOf(outs[0]) != "s1" {
				t.Errorf("Z2: went to %q", sessionOf(outs[0]))
			}
		}},
		{"the parent reloaded: the child must be loaded again", func(t *testing.T, c *zedConn) {
			c.agent(launchFrame("toolu_1"))
			child := c.reopenS1("1", "1", "toolu_1")
			c.client(loadFrame("2", child))
			if again := c.reopenS1("3", "3", "toolu_1"); again != child {
				t.Errorf("Z1: C changed between replays: %s then %s", child, again)
			}
			if outs := c.agent(permissionFrame("40", "toolu_1")); len(outs) != 1 || sessionOf(outs[0]) != "s1" {
				t.Errorf("Z2: a permission request after the parent's reload went to %q", sessionOf(outs[0]))
			}
		}},
		{"the loads spelled with escapes", func(t *testing.T, c *zedConn) {
			c.agent(launchFrame("toolu_1"))
			c.client(strings.Replace(loadFrame("1", "s1"), "session/load", `session\/load`, 1))
			child := childOf(c.agent(launchFrame("toolu_1")))
			c.agent(linkedChunk("toolu_1", "replayed"))
			c.agent(`{"jsonrpc":"2.0","id":1,"result":{}}`)
			if child == "" {
				t.Fatal("Z1: no key on the replay of an escaped session/load")
			}
			texts, ok := childThread(c.client(strings.Replace(loadFrame("2", child), `"sessionId"`, `"session\u0049d"`, 1)), child, "2")
			if !ok || strings.Join(texts, "|") != "Copy it|replayed" {
				t.Errorf("Z2: an escaped load of the child: answered %v, thread %q", ok, texts)
			}
		}},
		{"a new connection names the same child", func(t *testing.T, c *zedConn) {
			c.agent(launchFrame("toolu_1"))
			c.agent(launchFrame("toolu_1")) // the same id launched again
			first := c.reopenS1("1", "1", "toolu_1")
			other := newZedConn(t, zedInit, loadAgentInit)
			if again := other.reopenS1(`"x"`, `"x"`, "toolu_1"); again != first || first == "" {
				t.Errorf("Z1: C is %q in one connection, %q in the next", first, again)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.run(t, newZedConn(t, zedInit, loadAgentInit))
		})
	}
}

// TestZedReviewWhoGetsTheKey: Zed's key never reaches a client the
// rules do not give it to, nor a live call (Z1).
func TestZedReviewWhoGetsTheKey(t *testing.T) {
	tests := []struct {
		name                  string
		settings              rewrite.Settings
		clientInit, agentInit string
		key                   bool
	}{
		{"zed", nil, zedInit, loadAgentInit, true},
		{"an agent without loadSession", nil, zedInit, `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{}}}`, false},
		{"loadSession spelled with an escape", nil, zedInit, `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{"load\u0053ession":true}}}`, true},
		{"loadSession spaced", nil, zedInit, `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{"loadSession" : true }}}`, true},
		{"loadSession not a boolean", nil, zedInit, `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{"loadSession":"true"}}}`, false},
		{"another client", nil, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientInfo":{"name":"agent-shell"}}}`, loadAgentInit, false},
		{"another client, forced on", rewrite.Settings{"zed-subagents": "on"}, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientInfo":{"name":"agent-shell"}}}`, loadAgentInit, true},
		{"zed, forced off", rewrite.Settings{"zed-subagents": "off"}, zedInit, loadAgentInit, false},
		{"zed opted in to Subagent Sessions", nil, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientInfo":{"name":"zed"},"clientCapabilities":{"subagents":{}}}}`, loadAgentInit, false},
		{"zed opted in, forced on", rewrite.Settings{"zed-subagents": "on"}, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientInfo":{"name":"zed"},"clientCapabilities":{"_meta":{"subagents":true}}}}`, loadAgentInit, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newZedConnWith(t, tc.settings, tc.clientInit, tc.agentInit)
			if hasKey(c.agent(launchFrame("toolu_1"))) {
				t.Errorf("Z1: a live launch call got the key")
			}
			child := c.reopenS1("1", "1", "toolu_1")
			if got := child != ""; got != tc.key {
				t.Errorf("Z1: the replayed call has the key: %v, want %v", got, tc.key)
			}
			if hasKey(c.agent(launchFrame("toolu_2"))) || hasKey(c.agent(linkedChunk("toolu_2", "x"))) {
				t.Errorf("Z1: a live frame after the replay got the key")
			}
		})
	}
}

// TestZedReviewChunkStorm: a subagent's message in many chunks, and many
// tool calls, cost the client a bounded number of progress updates of
// bounded size (Z4's throttle is what the card shows; P2: nothing
// waits), whatever the storm.
func TestZedReviewChunkStorm(t *testing.T) {
	tests := []struct {
		name        string
		frames      func(i int) string
		n, maxExtra int
	}{
		{"20000 chunks of one message", func(i int) string { return linkedChunk("toolu_1", "w ") }, 20000, maxProgressUpdatesPerMessage},
		{"20000 chunks of one line", func(i int) string {
			if i == 0 {
				return linkedChunk("toolu_1", "short line\n")
			}
			return linkedChunk("toolu_1", "more text ")
		}, 20000, 1},
		{"3000 tool calls, one frame each", func(i int) string {
			return zedLinkedFrame("toolu_1", fmt.Sprintf(`"sessionUpdate":"tool_call","toolCallId":"c%d","title":"Read %d","status":"pending"`, i, i))
		}, 3000, 3000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newZedConn(t, zedInit, loadAgentInit)
			c.agent(launchFrame("toolu_1"))
			updates := 0
			for i := range tc.n {
				for _, o := range c.agent(tc.frames(i)) {
					if bytes.Contains(o.Frame, []byte(`"progress":true`)) {
						updates++
						if len(o.Frame) > 4<<10 {
							t.Fatalf("a progress update of %d bytes", len(o.Frame))
						}
					}
				}
			}
			if updates > tc.maxExtra {
				t.Errorf("Z4: %d frames gave %d progress updates, want at most %d", tc.n, updates, tc.maxExtra)
			}
		})
	}
}

// maxProgressUpdatesPerMessage: a message changes its line at most once
// per character of its start.
const maxProgressUpdatesPerMessage = 80

// TestZedReviewAgentsOwnKey: an agent that gives a launch call Zed's key
// itself (third-party agents do, to get the card) names a child it can
// load: the replay keeps the agent's key, and Zed's load of that child
// goes to the agent, not to a thread the proxy made up (Z1, Z2, P4).
func TestZedReviewAgentsOwnKey(t *testing.T) {
	own := `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call","toolCallId":"toolu_1","title":"Copy","rawInput":{"prompt":"Copy it"},"_meta":{"claudeCode":{"toolName":"Agent"},"subagent_session_info":{"session_id":"agent-child-7","message_start_index":0}}}}}`
	tests := []struct {
		name   string
		replay []string
	}{
		{"on the tool_call", []string{own}},
		{"on the tool_call, then an update without it", []string{own,
			`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call_update","toolCallId":"toolu_1","status":"completed","_meta":{"claudeCode":{"toolName":"Agent"}}}}}`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newZedConn(t, zedInit, loadAgentInit)
			c.agent(own)
			c.client(loadFrame("1", "s1"))
			for _, f := range tc.replay {
				for _, o := range c.agent(f) {
					if id := childOf([]route.Out{o}); id != "" && id != "agent-child-7" {
						t.Errorf("Z1: the agent's own key was replaced by %s", id)
					}
				}
			}
			c.agent(`{"jsonrpc":"2.0","id":1,"result":{}}`)
			outs := c.client(loadFrame("2", "agent-child-7"))
			if len(outs) != 1 || outs[0].To != pipe.Agent {
				t.Errorf("Z2: the load of the agent's own child did not go to the agent: %v", outs)
			}
		})
	}
}

// TestZedReviewManyChildren: thousands of subagents with hostile frame
// sizes keep what Z2 says and no more: a frame past a child's 4 MiB is
// not kept (nor any after it: a thread has no hole), and past 16 MiB
// for the connection the oldest children go first; every load is still
// answered {} (P6).
func TestZedReviewManyChildren(t *testing.T) {
	tests := []struct {
		name             string
		children, chunks int
		size             int
		// whole: the newest children, served whole.
		whole int
	}{
		{"2000 children of 24 KiB", 2000, 3, 8 << 10, 200},
		{"one frame past a child's bound", 1, 2, 5 << 20, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newZedConn(t, zedInit, loadAgentInit)
			text := strings.Repeat("z", tc.size)
			for i := range tc.children {
				id := fmt.Sprintf("toolu_%d", i)
				c.r.Handle(pipe.Agent, []byte(launchFrame(id)), nil)
				for range tc.chunks {
					c.r.Handle(pipe.Agent, []byte(linkedChunk(id, text)), nil)
				}
			}
			c.client(loadFrame("1", "s1"))
			var kids []string
			for i := range tc.children {
				kids = append(kids, childOf(c.agent(launchFrame(fmt.Sprintf("toolu_%d", i)))))
			}
			c.agent(`{"jsonrpc":"2.0","id":1,"result":{}}`)
			served := 0
			for i, kid := range kids {
				outs := c.r.Handle(pipe.Client, []byte(loadFrame("2", kid)), nil)
				if len(outs) == 0 || string(outs[len(outs)-1].Frame) != `{"jsonrpc":"2.0","id":2,"result":{}}` {
					t.Fatalf("Z2: the load of child %d was not answered {}", i)
				}
				for _, o := range outs {
					served += len(o.Frame)
				}
				if i >= tc.children-tc.whole && len(outs) != 2+tc.chunks {
					t.Errorf("Z2: child %d (of the newest) gave %d frames, want %d", i, len(outs), 2+tc.chunks)
				}
				if tc.whole == 0 && len(outs) != 2 {
					t.Errorf("Z2: a child whose first frame is past 4 MiB gave %d frames, want the prompt and {}", len(outs))
				}
			}
			if served > 17<<20 {
				t.Errorf("P6: the children served %d bytes: more than the 16 MiB kept", served)
			}
		})
	}
}

// TestZedReviewProgressKeepsP3: the launch call's content Z4 puts in
// front of the progress is what the client may see: a {"type":"session"}
// link the agent sent unasked is stripped there too (P3), in the
// progress updates and in the agent's later frames alike, and the
// content stays valid ACP.
func TestZedReviewProgressKeepsP3(t *testing.T) {
	link := `{"type":"session","sessionId":"agent-child"}`
	text := `{"type":"content","content":{"type":"text","text":"working"}}`
	withContent := func(content string) string {
		return `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call_update","toolCallId":"toolu_1","content":` + content + `,"_meta":{"claudeCode":{"toolName":"Agent"}}}}}`
	}
	tests := []struct {
		name    string
		content string
	}{
		{"a link after the text", "[" + text + "," + link + "]"},
		{"a link alone", "[" + link + "]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newZedConn(t, zedInit, loadAgentInit)
			c.agent(launchFrame("toolu_1"))
			var outs []route.Out
			outs = append(outs, c.agent(withContent(tc.content))...)
			outs = append(outs, c.agent(zedLinkedFrame("toolu_1", `"sessionUpdate":"tool_call","toolCallId":"c1","title":"Read"`))...)
			outs = append(outs, c.agent(withContent(tc.content))...)
			progress := 0
			for _, o := range outs {
				if o.To != pipe.Client {
					continue
				}
				if bytes.Contains(o.Frame, []byte(`"type":"session"`)) {
					t.Errorf("P3: a session link reached a client that did not opt in: %s", o.Frame)
				}
				if bytes.Contains(o.Frame, []byte(`"progress":true`)) {
					progress++
				}
			}
			if progress != 2 {
				t.Errorf("Z4: %d frames carry the progress, want 2 (the update and the agent's later frame)", progress)
			}
		})
	}
}

// TestZedReviewNoHoles: a child thread P6 dropped while its subagent
// still works is not started again, headless, by the subagent's later
// frames: a thread holds the subagent's frames from its first, or none
// (Z2: the oldest child dropped first; a frame past what is kept is
// never followed by one kept).
func TestZedReviewNoHoles(t *testing.T) {
	big := strings.Repeat("b", 1<<20)
	tests := []struct {
		name     string
		children int // launched after A, 3 MiB each
		want     string
	}{
		{"A kept: whole", 3, "Copy it|" + strings.Repeat("b|", 3) + "late"},
		{"A dropped: the prompt alone", 5, "Copy it"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newZedConn(t, zedInit, loadAgentInit)
			chunk := func(tc string) {
				c.r.Handle(pipe.Agent, []byte(linkedChunk(tc, big)), nil)
			}
			c.agent(launchFrame("A"))
			for range 3 {
				chunk("A")
			}
			for i := range tc.children {
				id := fmt.Sprintf("B%d", i)
				c.agent(launchFrame(id))
				for range 3 {
					chunk(id)
				}
			}
			c.agent(linkedChunk("A", "late"))
			c.client(loadFrame("1", "s1"))
			child := childOf(c.agent(launchFrame("A")))
			c.agent(`{"jsonrpc":"2.0","id":1,"result":{}}`)
			texts, ok := childThread(c.r.Handle(pipe.Client, []byte(loadFrame("2", child)), nil), child, "2")
			for i, s := range texts {
				if s == big {
					texts[i] = "b"
				}
			}
			if got := strings.Join(texts, "|"); !ok || got != tc.want {
				t.Errorf("Z2: A's thread is %q (answered %v), want %q", got, ok, tc.want)
			}
		})
	}
}

// TestZedReviewTwoLoadsOfTheParent: a client that loads the same
// session twice before the first answer (two panes, a retry) gets two
// replays; each gives the same C, and the session is live again only
// once both are answered (Z1, Z3).
func TestZedReviewTwoLoadsOfTheParent(t *testing.T) {
	tests := []struct {
		name                   string
		answerFirst, answerSec string
	}{
		{"answered in order", `{"jsonrpc":"2.0","id":1,"result":{}}`, `{"jsonrpc":"2.0","id":2,"result":{}}`},
		{"the second answered with an error", `{"jsonrpc":"2.0","id":1,"result":{}}`, `{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"busy"}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newZedConn(t, zedInit, loadAgentInit)
			c.agent(launchFrame("toolu_1"))
			c.client(loadFrame("1", "s1"))
			c.client(loadFrame("2", "s1"))
			first := childOf(c.agent(launchFrame("toolu_1")))
			c.agent(tc.answerFirst)
			second := childOf(c.agent(launchFrame("toolu_1")))
			if first == "" || second != first {
				t.Errorf("Z1: the two replays named %q and %q", first, second)
			}
			c.agent(tc.answerSec)
			if hasKey(c.agent(launchFrame("toolu_2"))) {
				t.Errorf("Z1: a live call after both answers got the key")
			}
		})
	}
}

// TestZedReviewCallForgotten: a launch call whose state P6 dropped (more
// launch calls than a table holds) keeps its C on its later frames in
// the same replay: an update is of the call's latest launch, not a new
// one (Z1: one card, one child).
func TestZedReviewCallForgotten(t *testing.T) {
	tests := []struct {
		name  string
		calls int
	}{
		{"within the table", 3},
		{"past the table", 12},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := route.NewRouter(route.RouterConfig{Modules: modules(), Version: "0", MaxEntries: 8})
			if err != nil {
				t.Fatal(err)
			}
			c := &zedConn{t: t, r: r}
			c.client(zedInit)
			c.agent(loadAgentInit)
			c.client(loadFrame("1", "s1"))
			first := childOf(c.agent(launchFrame("toolu_0")))
			for i := 1; i < tc.calls; i++ {
				c.agent(launchFrame(fmt.Sprintf("toolu_%d", i)))
			}
			upd := childOf(c.agent(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call_update","toolCallId":"toolu_0","status":"completed","_meta":{"claudeCode":{"toolName":"Agent"}}}}}`))
			if first == "" || upd != "" && upd != first {
				t.Errorf("Z1: toolu_0 named %q, then %q on its update", first, upd)
			}
		})
	}
}

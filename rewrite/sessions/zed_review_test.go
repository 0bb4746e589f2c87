package sessions_test

import (
	"bytes"
	"encoding/json"

	"testing"
	"unicode/utf8"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
	"github.com/acp-normalize/acp-normalize/pipe"
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
	t.Helper()
	r, err := route.NewRouter(route.RouterConfig{Modules: modules(), Version: "0"})
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

package timeline

import (
	"bytes"
	"strings"
	"testing"
)

// TestPrettyClientSessionIsNoChild: a session the client created (a
// session/new answer) or named (session/load) is drawn as the client's
// whatever the agent announces: a subagent_update that names it as a
// child, on itself or on another session, makes no child of it (S7: a
// session the client knows can never become a child).
func TestPrettyClientSessionIsNoChild(t *testing.T) {
	const upd = `{"from":"agent","frame":{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"%s","update":{"sessionUpdate":"subagent_update","sessionId":"%s","title":"t","state":{"state":"running"}}}}}`
	const chunk = `{"from":"agent","frame":{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"%s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hello %s"}}}}}`
	f := func(format string, args ...string) string {
		for _, a := range args {
			format = strings.Replace(format, "%s", a, 1)
		}
		return format
	}
	capture := lines(nestInitSub, nestInitResult,
		nestNew, `{"from":"agent","frame":{"jsonrpc":"2.0","id":1,"result":{"sessionId":"S"}}}`,
		`{"from":"client","frame":{"jsonrpc":"2.0","id":2,"method":"session/load","params":{"sessionId":"L","cwd":"/w","mcpServers":[]}}}`,
		`{"from":"agent","frame":{"jsonrpc":"2.0","id":2,"result":{}}}`,
		f(upd, "S", "S"), f(upd, "S", "L"), f(upd, "L", "S"),
		f(upd, "S", "C"), // a real child
		f(chunk, "S", "S"), f(chunk, "L", "L"), f(chunk, "C", "C"))
	var buf bytes.Buffer
	render(t, NewPretty(&buf, Options{}), nil, writeCapture(t, capture))
	out := buf.String()
	if n := strings.Count(out, "child session"); n != 1 || !strings.Contains(out, "child session C") {
		t.Errorf("want one child session, C:\n%s", out)
	}
	for _, l := range strings.Split(out, "\n") {
		for _, own := range []string{"hello S", "hello L"} {
			if strings.Contains(l, own) && strings.Contains(l, "│") {
				t.Errorf("a frame of the client's own session drawn as a child's: %q", l)
			}
		}
	}
}

// TestPrettyDeepChildrenBoundedIndent: a chain of children many
// generations deep is drawn at most maxIndent levels in, each header
// saying how deep the child really is.
func TestPrettyDeepChildrenBoundedIndent(t *testing.T) {
	const upd = `{"from":"agent","frame":{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"P","update":{"sessionUpdate":"subagent_update","sessionId":"C","title":"t","state":{"state":"running"}}}}}`
	const chunk = `{"from":"agent","frame":{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"C","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"}}}}}`
	recs := []string{nestInitSub, nestInitResult, nestNew, nestNewResult}
	parent := "s"
	const depth = 40
	for i := 1; i <= depth; i++ {
		child := "c" + strings.Repeat("x", i)
		recs = append(recs, strings.Replace(strings.Replace(upd, `"P"`, `"`+parent+`"`, 1), `"C"`, `"`+child+`"`, 1),
			strings.Replace(chunk, `"C"`, `"`+child+`"`, 1))
		parent = child
	}
	var buf bytes.Buffer
	render(t, NewPretty(&buf, Options{}), nil, writeCapture(t, lines(recs...)))
	out := buf.String()
	if got := strings.Count(out, "┌ child session"); got != depth {
		t.Fatalf("%d child headers, want %d:\n%s", got, depth, out)
	}
	if !strings.Contains(out, "(40 generations deep)") {
		t.Errorf("the deepest header does not say how deep it is:\n%s", out)
	}
	for _, l := range strings.Split(out, "\n") {
		if n := strings.Count(l, "│"); n > maxIndent {
			t.Fatalf("a line drawn %d levels in: %q", n, l)
		}
	}
}

// lines joins capture lines, each ended by a newline.
func lines(ls ...string) string { return strings.Join(ls, "\n") + "\n" }

// The opening of a session whose client opted in to Subagent Sessions.
const (
	nestInitSub    = `{"from":"client","frame":{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"subagents":{}}}}}`
	nestInitResult = `{"from":"agent","frame":{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{},"agentInfo":{"name":"fake","version":"2"}}}}`
	nestNew        = `{"from":"client","frame":{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/w","mcpServers":[]}}}`
	nestNewResult  = `{"from":"agent","frame":{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s"}}}`
)

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// cursorFakeAgentEnv makes the test binary act as a scripted fake
// `cursor-agent acp` (see cursorFakeAgent).
const cursorFakeAgentEnv = "ACP_NORMALIZE_TEST_CURSOR_FAKE_AGENT"

// proxyRequestID finds the id of the proxy's first own request in a frame
// (C12: "acp-normalize:TOKEN:1").
var proxyRequestID = regexp.MustCompile(`"acp-normalize:(?:[0-9a-f]+:)?1"`)

// cursorSession is the session id the fake agent hands out.
const cursorSession = "5e0c9a7b-1d2f-4e3a-8b6c-9d0e1f2a3b4c"

// cursorFakeAgent is the fake Cursor agent: the test binary runs it from
// TestMain when TestCursorE2E starts it with cursorFakeAgentEnv set. It
// answers initialize and session/new like cursor-agent, and for a prompt
// plays a turn with a foreground subagent (tool call completed, then
// cursor/task), cursor/update_todos and cursor/create_plan, waiting for
// the proxy's answer to each. It ends the turn with end_turn only when
// every answer is what Cursor expects; otherwise with "refusal" and the
// reason on stderr.
func cursorFakeAgent(stdin io.Reader, stdout, stderr io.Writer) int {
	in := bufio.NewReader(stdin)
	send := func(frame string) { fmt.Fprintf(stdout, "%s\n", frame) }
	type msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		line   []byte
	}
	read := func() (msg, bool) {
		line, err := in.ReadBytes('\n')
		if err != nil {
			return msg{}, false
		}
		var m msg
		if err := json.Unmarshal(line, &m); err != nil {
			fmt.Fprintf(stderr, "fake agent: bad frame %q\n", line)
			return msg{}, false
		}
		m.line = line
		return m, true
	}
	// await reads until the response to the agent's request id and
	// returns the whole frame.
	await := func(id string) ([]byte, bool) {
		for {
			m, ok := read()
			if !ok {
				return nil, false
			}
			if m.Method == "" && string(m.ID) == id {
				return m.line, true
			}
		}
	}
	const tc = "tool_2b4d6f80-1a3c-4e5f-9a7b-c1d3e5f7a9b2"
	update := func(u string) {
		send(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"` + cursorSession + `","update":` + u + `}}`)
	}
	for {
		m, ok := read()
		if !ok {
			return 0
		}
		switch m.Method {
		case "initialize":
			send(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"protocolVersion":1,"agentCapabilities":{"loadSession":true,"mcpCapabilities":{"http":true,"sse":true},"promptCapabilities":{"image":true,"audio":false,"embeddedContext":false},"sessionCapabilities":{"list":{}}},"authMethods":[{"id":"cursor_login","name":"Cursor Login","description":null}]}}`)
		case "session/new":
			send(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"sessionId":"` + cursorSession + `"}}`)
		case "session/prompt":
			var problems []string
			expect := func(what, id, want string) {
				got, ok := await(id)
				if !ok {
					problems = append(problems, what+": no answer")
					return
				}
				if !strings.Contains(string(got), want) {
					problems = append(problems, fmt.Sprintf("%s: got %s, want %s", what, got, want))
				}
			}
			update(`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Delegating."}}`)
			update(`{"sessionUpdate":"tool_call","toolCallId":"` + tc + `","title":"Task: count files","kind":"other","status":"pending","rawInput":{"_toolName":"task","description":"count files","prompt":"Count the .go files","subagentType":{"unspecified":{}}}}`)
			update(`{"sessionUpdate":"tool_call_update","toolCallId":"` + tc + `","status":"in_progress"}`)
			update(`{"sessionUpdate":"tool_call_update","toolCallId":"` + tc + `","status":"completed","rawOutput":{"durationMs":7627,"isBackground":false}}`)
			send(`{"jsonrpc":"2.0","id":0,"method":"cursor/task","params":{"toolCallId":"` + tc + `","description":"count files","prompt":"Count the .go files","subagentType":{"custom":{"unspecified":{}}},"model":"gpt-5.4-mini-medium","agentId":"5b886cff","durationMs":7627}}`)
			expect("cursor/task", "0", `{}`)
			send(`{"jsonrpc":"2.0","id":1,"method":"cursor/update_todos","params":{"toolCallId":"tool_u1","todos":[{"id":"1","content":"Count files","status":"completed"},{"id":"2","content":"Report","status":"pending"}],"merge":false}}`)
			expect("cursor/update_todos", "1", `{"outcome":{"outcome":"accepted","todos":[{"id":"1","content":"Count files","status":"completed"},{"id":"2","content":"Report","status":"pending"}]}}`)
			update(`{"sessionUpdate":"tool_call","toolCallId":"tool_p1","title":"Create Plan: Report","kind":"other","status":"pending","rawInput":{"_toolName":"createPlan"}}`)
			send(`{"jsonrpc":"2.0","id":2,"method":"cursor/create_plan","params":{"toolCallId":"tool_p1","name":"Report","plan":"# Report\n\nSay how many files.","todos":[{"id":"2","content":"Report","status":"pending"}]}}`)
			expect("cursor/create_plan", "2", `{"outcome":{"outcome":"accepted"}}`)
			// C13: an unknown method is answered -32601 by the proxy, or,
			// with the option (whose environment twin the agent inherits),
			// reaches the client, which answers it.
			send(`{"jsonrpc":"2.0","id":3,"method":"cursor/brand_new","params":{}}`)
			if os.Getenv("ACP_NORMALIZE_FORWARD_UNKNOWN_VENDOR_METHODS") == "true" {
				expect("cursor/brand_new forwarded", "3", `"result":{"seen":true}`)
			} else {
				expect("cursor/brand_new", "3", `"code":-32601`)
			}
			reason := "end_turn"
			if len(problems) > 0 {
				reason = "refusal"
				fmt.Fprintf(stderr, "fake agent: %s\n", strings.Join(problems, "; "))
			}
			send(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"stopReason":"` + reason + `"}}`)
		}
	}
}

// cursorClient is the test's side of the proxy's stdio.
type cursorClient struct {
	t     *testing.T
	stdin io.Writer
	lines chan []byte
	seen  [][]byte
}

func (c *cursorClient) send(frame string) {
	c.t.Helper()
	if _, err := io.WriteString(c.stdin, frame+"\n"); err != nil {
		c.t.Fatalf("writing to the proxy: %v", err)
	}
}

// until reads frames until one contains all of want, and returns it.
func (c *cursorClient) until(want ...string) []byte {
	c.t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		select {
		case line, ok := <-c.lines:
			if !ok {
				c.t.Fatalf("proxy closed stdout while waiting for %q", want)
			}
			c.seen = append(c.seen, line)
			all := true
			for _, w := range want {
				all = all && bytes.Contains(line, []byte(w))
			}
			if all {
				return line
			}
		case <-timeout:
			for _, l := range c.seen {
				c.t.Logf("seen: %s", l)
			}
			c.t.Fatalf("timed out waiting for %q", want)
		}
	}
}

// TestCursorE2E builds acp-normalize and runs it in front of the fake
// Cursor agent, as an editor would: initialize, session/new, and a prompt
// turn with a subagent, todos, a plan the test client approves and an
// unknown vendor method. It checks what the client sees (C1, C3, C8, C9,
// C12, C13, M) and, through the fake agent's stop reason, what Cursor got
// back; once with defaults, once with the environment twin of
// --forward-unknown-vendor-methods, and once behind two proxies (C12:
// `acp-normalize -- acp-normalize -- cursor-agent acp`, where the outer
// proxy must forward the client's answer to the inner proxy's request).
func TestCursorE2E(t *testing.T) {
	tests := []struct {
		name    string
		env     []string
		forward bool
		nested  bool
	}{
		{"defaults", nil, false, false},
		{"forward unknown vendor methods by env", []string{"ACP_NORMALIZE_FORWARD_UNKNOWN_VENDOR_METHODS=true"}, true, false},
		{"C12 nested proxies", nil, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cursorRunE2E(t, tt.env, tt.forward, tt.nested)
		})
	}
}

func cursorRunE2E(t *testing.T, env []string, forward, nested bool) {
	bin := proxyBinary // built by TestMain
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"--log-level", "debug", "--"}
	if nested {
		// Both proxies run every module: the outer one sees the inner
		// one's advertisement and leaves its modules' work alone, so the
		// fields only the (consumed) cursor/task had still reach the
		// client, and plan approval goes through both (C12).
		args = []string{"--log-level", "debug", "--", bin, "--log-level", "debug", "--"}
	}
	cmd := exec.Command(bin, append(args, self)...)
	cmd.Env = append(append(os.Environ(), cursorFakeAgentEnv+"=1"), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdin, stdout := startPiped(t, cmd)
	c := &cursorClient{t: t, stdin: stdin, lines: make(chan []byte, 64)}
	go func() {
		defer close(c.lines)
		r := bufio.NewReader(stdout)
		for {
			line, err := r.ReadBytes('\n')
			if len(line) > 0 {
				c.lines <- bytes.TrimSuffix(line, []byte("\n"))
			}
			if err != nil {
				return
			}
		}
	}()
	defer func() {
		if t.Failed() {
			t.Logf("proxy stderr:\n%s", stderr.String())
		}
	}()

	c.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":true,"writeTextFile":true},"terminal":true}}}`)
	// The whole module list, also when nested: the inner proxy's modules
	// are off in the outer one, which still lists them.
	var names []string
	for _, m := range allModules() {
		names = append(names, m.Name)
	}
	advertised, _ := json.Marshal(names)
	c.until(`"id":0`, `"acp-normalize":{"modules":`+string(advertised))
	c.send(`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}`)
	c.until(`"id":1`, cursorSession)
	c.send(`{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"` + cursorSession + `","prompt":[{"type":"text","text":"count the go files"}]}}`)

	first := c.until(`"sessionUpdate":"tool_call"`, `"_toolName":"task"`)
	for _, want := range []string{`"name":"task"`, `"subagent":{"vendor":"cursor"`, `"status":"pending"`} {
		if !bytes.Contains(first, []byte(want)) {
			t.Errorf("M/C7: first task frame lacks %s: %s", want, first)
		}
	}
	c3 := c.until(`"model":"gpt-5.4-mini-medium"`)
	if !bytes.Contains(c3, []byte(`"agentId":`)) {
		t.Errorf("M: the snapshot lost cursor/task's agentId: %s", c3)
	}
	if bytes.Contains(c3, []byte(`"status":"completed","rawOutput"`)) || !bytes.Contains(c3, []byte(`"tool_call_update"`)) {
		t.Errorf("C3: want a tool_call_update in place of cursor/task: %s", c3)
	}
	var c3msg struct {
		Params struct {
			Update map[string]json.RawMessage `json:"update"`
		} `json:"params"`
	}
	if err := json.Unmarshal(c3, &c3msg); err != nil {
		t.Fatal(err)
	}
	if _, has := c3msg.Params.Update["status"]; has {
		t.Errorf("C3/P4: the proxy's update carries a status: %s", c3)
	}
	c.until(`"sessionUpdate":"plan"`, `"content":"Count files"`)
	perm := c.until(`"method":"session/request_permission"`)
	permID := proxyRequestID.Find(perm)
	if permID == nil || !bytes.Contains(perm, []byte(`"title":"Create Plan: Report"`)) {
		t.Errorf("C9/C12: unexpected permission request: %s", perm)
	}
	c.send(`{"jsonrpc":"2.0","id":` + string(permID) + `,"result":{"outcome":{"outcome":"selected","optionId":"accept"}}}`)
	if forward {
		c.until(`"id":3`, `"method":"cursor/brand_new"`)
		c.send(`{"jsonrpc":"2.0","id":3,"result":{"seen":true}}`)
	}
	end := c.until(`"id":2`, `"stopReason"`)
	if !bytes.Contains(end, []byte(`"stopReason":"end_turn"`)) {
		t.Errorf("the fake Cursor agent did not get the answers it expects: %s", end)
	}
	for _, line := range c.seen {
		if !json.Valid(line) {
			t.Errorf("F7: non-JSON on stdout: %q", line)
		}
		if bytes.Contains(line, []byte(`"method":"cursor/`)) && !(forward && bytes.Contains(line, []byte(`cursor/brand_new`))) {
			t.Errorf("C1: a cursor/* method reached the client: %s", line)
		}
	}
	_ = stdin.(io.Closer).Close()
	for range c.lines {
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("proxy exit: %v", err)
	}
}

// startPiped starts cmd with pipes to its stdin and from its stdout.
func startPiped(t *testing.T, cmd *exec.Cmd) (io.WriteCloser, io.ReadCloser) {
	t.Helper()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return stdin, stdout
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/proxy"
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/rewrite/rewritetest"
	"github.com/acp-normalize/acp-normalize/route"
)

// recordingClient is an ACP client (the Go SDK's Client interface) that
// records what it is sent and allows every permission request.
type recordingClient struct {
	mu          sync.Mutex
	updates     []acp.SessionNotification
	permissions []acp.RequestPermissionRequest
}

func newRecordingClient() *recordingClient { return &recordingClient{} }

func (c *recordingClient) RequestPermission(_ context.Context, p acp.RequestPermissionRequest) (acp.RequestPermissionResponse, error) {
	c.mu.Lock()
	c.permissions = append(c.permissions, p)
	c.mu.Unlock()
	return acp.RequestPermissionResponse{Outcome: acp.RequestPermissionOutcome{
		Selected: &acp.RequestPermissionOutcomeSelected{OptionId: p.Options[0].OptionId},
	}}, nil
}

func (c *recordingClient) SessionUpdate(_ context.Context, n acp.SessionNotification) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.updates = append(c.updates, n)
	return nil
}

func (c *recordingClient) ReadTextFile(context.Context, acp.ReadTextFileRequest) (acp.ReadTextFileResponse, error) {
	return acp.ReadTextFileResponse{}, fmt.Errorf("not supported")
}

func (c *recordingClient) WriteTextFile(context.Context, acp.WriteTextFileRequest) (acp.WriteTextFileResponse, error) {
	return acp.WriteTextFileResponse{}, fmt.Errorf("not supported")
}

func (c *recordingClient) CreateTerminal(context.Context, acp.CreateTerminalRequest) (acp.CreateTerminalResponse, error) {
	return acp.CreateTerminalResponse{}, fmt.Errorf("not supported")
}

func (c *recordingClient) KillTerminal(context.Context, acp.KillTerminalRequest) (acp.KillTerminalResponse, error) {
	return acp.KillTerminalResponse{}, fmt.Errorf("not supported")
}

func (c *recordingClient) TerminalOutput(context.Context, acp.TerminalOutputRequest) (acp.TerminalOutputResponse, error) {
	return acp.TerminalOutputResponse{}, fmt.Errorf("not supported")
}

func (c *recordingClient) ReleaseTerminal(context.Context, acp.ReleaseTerminalRequest) (acp.ReleaseTerminalResponse, error) {
	return acp.ReleaseTerminalResponse{}, fmt.Errorf("not supported")
}

func (c *recordingClient) WaitForTerminalExit(context.Context, acp.WaitForTerminalExitRequest) (acp.WaitForTerminalExitResponse, error) {
	return acp.WaitForTerminalExitResponse{}, fmt.Errorf("not supported")
}

// lockedBuffer is a bytes.Buffer safe for concurrent writers.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// answerWatch passes the client's frames to the proxy and closes done once
// one of them answers a proxy request (a result or error under an
// "acp-normalize:" id, C12) has been written.
type answerWatch struct {
	w    io.Writer
	mu   sync.Mutex
	line []byte // the frame being written, up to its newline
	done chan struct{}
	once sync.Once
}

func (a *answerWatch) Write(p []byte) (int, error) {
	n, err := a.w.Write(p)
	a.mu.Lock()
	defer a.mu.Unlock()
	for rest := p[:n]; len(rest) > 0; {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			a.line = append(a.line, rest...)
			break
		}
		a.line = append(a.line, rest[:i]...)
		if env := pipe.Peek(a.line); env.Kind == pipe.Response && bytes.HasPrefix(env.ID, []byte(`"acp-normalize:`)) {
			a.once.Do(func() { close(a.done) })
		}
		a.line, rest = a.line[:0], rest[i+1:]
	}
	return n, err
}

// session is what the client saw of one session.
type session struct {
	client  *recordingClient
	init    acp.InitializeResponse
	stop    acp.StopReason
	wire    []byte // every frame the client received, as received
	stderr  string
	exit    int
	timeout bool
}

// runSession drives one session with the SDK's client connection over
// the given proxy, waiting for a permission request when wantPermission
// is set: start is called with the client's ends of the pipes
// and returns when the proxy has exited, with its exit code.
func runSession(t *testing.T, wantPermission bool, start func(stdin io.Reader, stdout io.Writer, stderr io.Writer) int) *session {
	t.Helper()
	toProxyR, toProxyW := io.Pipe()
	fromProxyR, fromProxyW := io.Pipe()
	var wire lockedBuffer
	var stderr lockedBuffer
	exited := make(chan int, 1)
	go func() {
		code := start(toProxyR, fromProxyW, &stderr)
		_ = fromProxyW.Close()
		exited <- code
	}()
	s := &session{client: newRecordingClient()}
	// The event the session's end waits for: the client's answer to the
	// proxy's permission request written to the proxy (C12). The handler's
	// being called is not it: the SDK writes the answer after the handler
	// returns, and a client that leaves first gets the request cancelled.
	answered := &answerWatch{w: toProxyW, done: make(chan struct{})}
	conn := acp.NewClientSideConnection(s.client, answered, io.TeeReader(fromProxyR, &wire))
	conn.SetLogger(slog.New(slog.DiscardHandler))

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var err error
	s.init, err = conn.Initialize(ctx, acp.InitializeRequest{
		ProtocolVersion: acp.ProtocolVersionNumber,
		ClientInfo:      &acp.Implementation{Name: "sdk-test", Version: "1"},
	})
	if err != nil {
		t.Fatalf("initialize: %v (stderr: %s)", err, stderr.String())
	}
	sess, err := conn.NewSession(ctx, acp.NewSessionRequest{Cwd: "/work/demo", McpServers: []acp.McpServer{}})
	if err != nil {
		t.Fatalf("session/new: %v", err)
	}
	if sess.SessionId != "sess-1" {
		t.Errorf("session id %q, want the recorded sess-1", sess.SessionId)
	}
	resp, err := conn.Prompt(ctx, acp.PromptRequest{SessionId: sess.SessionId, Prompt: []acp.ContentBlock{acp.TextBlock("Count the Go files")}})
	if err != nil {
		t.Fatalf("session/prompt: %v", err)
	}
	s.stop = resp.StopReason
	// A request the capture cannot answer gets an error, never silence.
	if _, err := conn.SetSessionMode(ctx, acp.SetSessionModeRequest{SessionId: sess.SessionId, ModeId: "plan"}); err == nil ||
		!strings.Contains(err.Error(), "Method not found") {
		t.Errorf("session/set_mode (not in the capture): err %v, want method not found", err)
	}
	if wantPermission {
		select {
		case <-answered.done:
		case <-ctx.Done():
			s.timeout = true
		}
	}
	_ = toProxyW.Close() // client EOF: the mock agent ends, then the proxy
	select {
	case s.exit = <-exited:
	case <-ctx.Done():
		t.Fatalf("proxy did not exit after client EOF (stderr: %s)", stderr.String())
	}
	s.wire = []byte(wire.String())
	s.stderr = stderr.String()
	return s
}

// framesByKind returns the frames the client received, by method or, for
// session/update, by sessionUpdate tag.
func framesByKind(t *testing.T, wire []byte) map[string][][]byte {
	t.Helper()
	out := map[string][][]byte{}
	r := pipe.NewReader(bytes.NewReader(wire))
	for {
		f, err := r.ReadFrame()
		if err != nil {
			return out
		}
		f = bytes.Clone(f)
		env := pipe.Peek(f)
		key := string(env.Method)
		if key == "session/update" {
			tag, _ := rawjson.LookupString(f, "params", "update", "sessionUpdate")
			key += " " + tag
		}
		if env.Kind == pipe.Response {
			key = "response"
		}
		out[key] = append(out[key], f)
	}
}

func mockCapture(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("testdata", "mock-session.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestMockAgentThroughProxySDKClient drives `mock-agent` (this test
// binary, re-executed as the command) through the proxy (proxy.Run, with
// a test module making every kind of change) with the Go SDK's client
// connection, and checks that the client saw the recorded session,
// normalized: the initialize advertisement (rule M), the replaced tool
// call, the emitted update, the proxy's own permission request (C12), and
// none of the frames the module drops.
func TestMockAgentThroughProxySDKClient(t *testing.T) {
	t.Setenv(envRunMain, "1") // the proxy passes its environment to the agent (F4)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	capture := mockCapture(t)
	var rec bytes.Buffer
	cw := pipe.NewCaptureWriter(&rec, false)
	s := runSession(t, true, func(stdin io.Reader, stdout, stderr io.Writer) int {
		code, err := proxy.Run(proxy.Config{
			Argv: []string{self, "mock-agent", "--log-level", "debug", capture},
			Router: route.RouterConfig{
				Modules: []rewrite.Module{rewritetest.Module()},
				Version: "test",
				Capture: cw,
			},
			Stdin:       stdin,
			Stdout:      stdout,
			AgentStderr: stderr,
			KillGrace:   5 * time.Second,
		})
		if err != nil {
			t.Errorf("proxy.Run: %v", err)
		}
		return code
	})
	// proxy.Run only queues the last records (R1): closing the capture
	// writes them, as the command does before it exits.
	if err := cw.Close(); err != nil {
		t.Errorf("closing the capture: %v", err)
	}
	if s.exit != 0 {
		t.Errorf("proxy exit code %d, want the mock agent's 0 (stderr: %s)", s.exit, s.stderr)
	}
	adv, _ := json.Marshal(s.init.AgentCapabilities.Meta["acp-normalize"])
	if string(adv) != `{"modules":["test"],"version":"test"}` {
		t.Errorf("initialize advertisement %s (rule M)", adv)
	}
	if !s.init.AgentCapabilities.LoadSession {
		t.Error("recorded agent capabilities lost")
	}
	if s.stop != acp.StopReasonEndTurn {
		t.Errorf("stop reason %q, want the recorded end_turn", s.stop)
	}

	byKind := framesByKind(t, s.wire)
	for kind, n := range map[string]int{
		"session/update available_commands_update": 1,
		"session/update agent_thought_chunk":       1,
		"session/update agent_message_chunk":       3,
		"session/update tool_call":                 1,
		"session/update tool_call_update":          3, // in_progress, completed, and the emitted title
		"session/update plan":                      1,
		"session/request_permission":               1,
		"test/task":                                0,
		"test/ask":                                 0,
	} {
		if got := len(byKind[kind]); got != n {
			t.Errorf("client received %d %s, want %d", got, kind, n)
		}
	}
	if tc := byKind["session/update tool_call"]; len(tc) == 1 {
		if name, _ := rawjson.LookupString(tc[0], "params", "update", "name"); name != "task" {
			t.Errorf("tool_call not replaced (name %q): %s", name, tc[0])
		}
	}
	if tcu := byKind["session/update tool_call_update"]; len(tcu) == 3 {
		if title, _ := rawjson.LookupString(tcu[2], "params", "update", "title"); title != "Task: count files" {
			t.Errorf("emitted update has title %q: %s", title, tcu[2])
		}
	}
	if s.timeout {
		t.Error("the client never answered the proxy's permission request")
	}
	s.client.mu.Lock()
	defer s.client.mu.Unlock()
	if len(s.client.permissions) == 1 {
		p := s.client.permissions[0]
		if p.ToolCall.Title == nil || *p.ToolCall.Title != "Write the report to a file?" || len(p.Options) != 2 {
			t.Errorf("permission request %+v", p)
		}
	}
	var text strings.Builder
	for _, u := range s.client.updates {
		if c := u.Update.AgentMessageChunk; c != nil && c.Content.Text != nil {
			text.WriteString(c.Content.Text.Text)
		}
	}
	if text.String() != "I'll ask a subagent. There are 42 Go files." {
		t.Errorf("message text %q, recorded chunks out of order or lost", text.String())
	}
	// The proxy's request went out with its own id, and the client's
	// answer was consumed by the proxy and turned into the agent's reply.
	if !regexp.MustCompile(`"op":"request","to":"client","frame":\{"jsonrpc":"2.0","id":"acp-normalize:[0-9a-f]+:1"`).Match(rec.Bytes()) ||
		!bytes.Contains(rec.Bytes(), []byte(`"op":"emit","to":"agent","frame":{"jsonrpc":"2.0","id":1,"result":{"outcome":{"outcome":"answered"}}}`)) {
		t.Errorf("recording lacks the proxy's request or the agent's reply:\n%s", rec.String())
	}
	if !strings.Contains(s.stderr, "loading model") {
		t.Errorf("recorded agent stderr not replayed: %q", s.stderr)
	}
}

// TestReadmeCommandMockAgent runs the documented command line
// `acp-normalize -- acp-normalize mock-agent capture.jsonl` (both this
// test binary) with the real module list, and checks the SDK client sees
// the recorded session with the proxy's advertisement.
func TestReadmeCommandMockAgent(t *testing.T) {
	t.Setenv(envRunMain, "1")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	capture := mockCapture(t)
	s := runSession(t, false, func(stdin io.Reader, stdout, stderr io.Writer) int {
		return run([]string{"acp-normalize", "--log-level", "warn", "--", self, "mock-agent", capture}, stdin, stdout, stderr)
	})
	if s.exit != 0 {
		t.Errorf("exit code %d (stderr: %s)", s.exit, s.stderr)
	}
	adv, ok := s.init.AgentCapabilities.Meta["acp-normalize"].(map[string]any)
	if !ok || adv["version"] != version {
		t.Errorf("initialize advertisement %v, want version %s (rule M)", s.init.AgentCapabilities.Meta, version)
	}
	if s.stop != acp.StopReasonEndTurn {
		t.Errorf("stop reason %q", s.stop)
	}
	byKind := framesByKind(t, s.wire)
	if n := len(byKind["session/update agent_message_chunk"]); n != 3 {
		t.Errorf("%d message chunks, want 3", n)
	}
}

// TestMockAgentCommand pins the command's own behaviour: usage errors,
// bad capture lines reported as FILE:LINE and served around, frames only
// on stdout, exit 0 at the client's EOF.
func TestMockAgentCommand(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		stdin      string
		wantCode   int
		wantStdout string
		wantStderr []string
	}{
		{name: "no_capture", args: []string{"mock-agent"}, wantCode: exitUsage,
			wantStderr: []string{"acp-normalize: mock-agent: give exactly one capture"}},
		{name: "missing_capture", args: []string{"mock-agent", "testdata/no-such.jsonl"}, wantCode: exitUsage,
			wantStderr: []string{"acp-normalize: mock-agent: testdata/no-such.jsonl: no such file or directory"}},
		{name: "bad_lines_reported_rest_served", args: []string{"mock-agent", "--no-stderr", "testdata/bad-lines.jsonl"},
			stdin:    `{"jsonrpc":"2.0","id":"p","method":"session/prompt","params":{}}` + "\n",
			wantCode: 0,
			// Line 5's unreadable ts costs its time, not the frame.
			wantStdout: `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"before"}}}}` + "\n" + `{"jsonrpc":"2.0","method":"x"}` + "\n" + `{"jsonrpc":"2.0","id":"p","result":{"stopReason":"end_turn"}}` + "\n",
			wantStderr: []string{
				"testdata/bad-lines.jsonl:3: not a capture record",
				"testdata/bad-lines.jsonl:4: replay output line, not a capture record",
			}},
		{name: "recorded_stderr_replayed", args: []string{"mock-agent", "--log-level", "error", "testdata/mock-session.jsonl"},
			stdin:      `{"jsonrpc":"2.0","id":7,"method":"session/new","params":{}}` + "\n",
			wantCode:   0,
			wantStdout: `{"jsonrpc":"2.0","id":7,"result":{"sessionId":"sess-1"}}` + "\n" + `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess-1","update":{"sessionUpdate":"available_commands_update","availableCommands":[]}}}` + "\n",
			wantStderr: []string{"loading model\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(append([]string{"acp-normalize"}, tt.args...), strings.NewReader(tt.stdin), &stdout, &stderr)
			if code != tt.wantCode {
				t.Errorf("exit %d, want %d (stderr %q)", code, tt.wantCode, stderr.String())
			}
			if stdout.String() != tt.wantStdout {
				t.Errorf("stdout:\n%s\nwant:\n%s", stdout.String(), tt.wantStdout)
			}
			for _, want := range tt.wantStderr {
				if !strings.Contains(stderr.String(), want) {
					t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
				}
			}
		})
	}
}

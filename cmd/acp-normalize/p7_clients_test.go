//go:build unix

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/proxy"
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/route"
)

// TestP7KandevScriptedClient runs the real binary, recording, in front of
// `acp-normalize mock-agent` serving the bundled foreground Cursor
// capture, with a scripted client that names itself kandev-agentctl (rule
// P7): cursor/task reaches it byte for byte as Cursor sent it, its own
// answer is what goes to the agent (the capture holds it as the client's
// frame and no proxy reply), the initialize result says clientHandles,
// and C3's update after the request adds no title or content the client
// would not have without the proxy. Everything else still happens: the
// tool call frames carry the snapshot, now with model and agentId.
func TestP7KandevScriptedClient(t *testing.T) {
	capture, err := filepath.Abs(filepath.Join("..", "..", "testdata", "captures", "cursor", "subagent-foreground.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	rec := filepath.Join(t.TempDir(), "session.jsonl")
	cmd := exec.Command(proxyBinary, "--record", rec, "--", proxyBinary, "mock-agent", "--no-stderr", capture)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdin, stdout := startPiped(t, cmd)
	const answer = `{"jsonrpc":"2.0","id":0,"result":{"kandev":"handled"}}`
	send := func(s string) {
		if _, err := io.WriteString(stdin, s+"\n"); err != nil {
			t.Fatalf("write: %v", err)
		}
	}
	send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":true,"writeTextFile":true},"terminal":true},"clientInfo":{"name":"kandev-agentctl","version":"0.1.0"}}}`)
	send(`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"3f9a1c2e-7b4d-4e8a-9c61-5d2f0b8e4a17","prompt":[{"type":"text","text":"go"}]}}`)
	var frames [][]byte
	var task []byte
	sc := bufio.NewScanner(stdout)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		f := bytes.Clone(sc.Bytes())
		frames = append(frames, f)
		env := pipe.Peek(f)
		if string(env.Method) == "cursor/task" {
			task = f
			send(answer)
		}
		if env.Kind == pipe.Response && string(env.ID) == "2" {
			break
		}
	}
	_ = stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("proxy: %v (stderr: %s)", err, stderr.String())
	}
	if task == nil {
		t.Fatalf("P7: cursor/task never reached kandev-agentctl (stderr: %s)", stderr.String())
	}
	if want := recordedAgentFrame(t, capture, "cursor/task"); !bytes.Equal(task, want) {
		t.Errorf("P7/P1: cursor/task reached the client as\n%s\nwant the agent's bytes\n%s", task, want)
	}
	if h, _ := rawjson.Lookup(frames[0], "result", "agentCapabilities", "_meta", "acp-normalize", "clientHandles"); string(h) != `["cursor/task"]` {
		t.Errorf("P7: advertisement clientHandles = %s, want [\"cursor/task\"] in %s", h, frames[0])
	}
	model := false
	for i, f := range frames {
		if m, _ := rawjson.LookupString(f, "params", "update", "_meta", "acp-normalize", "subagent", "model"); m != "" {
			model = true
		}
		if i > 0 && bytes.Equal(frames[i-1], task) {
			// C3's update right after the request: the snapshot alone.
			for _, k := range []string{"title", "content", "status"} {
				if _, ok := rawjson.Lookup(f, "params", "update", k); ok {
					t.Errorf("P7: the update after cursor/task carries %s for a client that handles cursor/task: %s", k, f)
				}
			}
		}
	}
	if !model {
		t.Error("P7/M: the snapshot lost the model cursor/task gave")
	}
	recs := readCaptureRecords(t, rec)
	client, replied := false, false
	for _, r := range recs {
		if r.From == "client" && string(r.Frame) == answer {
			client = true
		}
		if r.Op == pipe.OpReply && r.To == "agent" {
			replied = true
		}
	}
	if !client || replied {
		t.Errorf("P7: the capture must hold the client's answer (%v) and no proxy reply to the agent (%v)", client, replied)
	}
}

// recordedAgentFrame returns the first agent frame of a capture with the
// method, as the agent wrote it.
func recordedAgentFrame(t *testing.T, capture, method string) []byte {
	t.Helper()
	for _, r := range readCaptureRecords(t, capture) {
		if r.From == "agent" && string(pipe.Peek(r.Frame).Method) == method {
			return r.Frame
		}
	}
	t.Fatalf("%s: no %s", capture, method)
	return nil
}

type captureRecord struct {
	From  string          `json:"from"`
	To    string          `json:"to"`
	Op    string          `json:"op"`
	Frame json.RawMessage `json:"frame"`
}

func readCaptureRecords(t *testing.T, path string) []captureRecord {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []captureRecord
	for _, line := range bytes.Split(data, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var r captureRecord
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, r)
	}
	return out
}

// extensionClient is the Go SDK's client with an extension-method
// handler: the SDK hands it every '_'-prefixed agent method.
type extensionClient struct {
	*recordingClient
	mu      sync.Mutex
	methods []string
}

func (c *extensionClient) HandleExtensionMethod(_ context.Context, method string, params json.RawMessage) (any, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.methods = append(c.methods, method+" "+string(params))
	return map[string]string{"handledBy": "go-sdk"}, nil
}

// TestP7GoSDKClientHandles: the Go SDK client (github.com/coder/acp-go-sdk)
// handles _cursor/task itself, and says so with --client-handles (rule
// P7). Through the proxy, over the bundled legacy Cursor capture, the SDK
// gets _cursor/task (and only it: _cursor/update_todos stays the proxy's,
// C8), its answer goes to the agent and the proxy sends none, the turn
// ends as recorded, and the client's plan still comes from the proxy.
func TestP7GoSDKClientHandles(t *testing.T) {
	t.Setenv(envRunMain, "1")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	capture, err := filepath.Abs(filepath.Join("..", "..", "testdata", "captures", "cursor", "legacy-underscore.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	toProxyR, toProxyW := io.Pipe()
	fromProxyR, fromProxyW := io.Pipe()
	var rec, stderr lockedBuffer
	capw := pipe.NewCaptureWriter(&rec, false)
	exited := make(chan int, 1)
	go func() {
		code, err := proxy.Run(proxy.Config{
			Argv: []string{self, "mock-agent", "--no-stderr", capture},
			Router: route.RouterConfig{Modules: allModules(), Version: version,
				Settings: rewrite.Settings{rewrite.ClientHandlesOption: "_cursor/task"},
				Capture:  capw},
			Stdin: toProxyR, Stdout: fromProxyW, AgentStderr: &stderr, KillGrace: 5 * time.Second,
		})
		if err != nil {
			t.Errorf("proxy.Run: %v", err)
		}
		_ = fromProxyW.Close()
		exited <- code
	}()
	client := &extensionClient{recordingClient: newRecordingClient()}
	answered := &signalWriter{w: toProxyW, mark: []byte(`"handledBy":"go-sdk"`), seen: make(chan struct{})}
	conn := acp.NewClientSideConnection(client, answered, fromProxyR)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	init, err := conn.Initialize(ctx, acp.InitializeRequest{ProtocolVersion: 1, ClientInfo: &acp.Implementation{Name: "go-sdk-test", Version: "1"}})
	if err != nil {
		t.Fatal(err)
	}
	if h := fmt.Sprint(init.AgentCapabilities.Meta["acp-normalize"]); !strings.Contains(h, "clientHandles:[_cursor/task]") {
		t.Errorf("P7: advertisement %s does not name _cursor/task", h)
	}
	sess, err := conn.NewSession(ctx, acp.NewSessionRequest{Cwd: "/tmp", McpServers: []acp.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := conn.Prompt(ctx, acp.PromptRequest{SessionId: sess.SessionId, Prompt: []acp.ContentBlock{acp.TextBlock("go")}})
	if err != nil || res.StopReason != "end_turn" {
		t.Fatalf("prompt: %v %v (stderr: %s)", res.StopReason, err, stderr.String())
	}
	select {
	case <-answered.seen: // the SDK's answer is on its way before the client's EOF
	case <-ctx.Done():
		t.Fatal("P7: the SDK never answered _cursor/task")
	}
	_ = toProxyW.Close()
	select {
	case code := <-exited:
		if code != 0 {
			t.Errorf("proxy exit %d", code)
		}
	case <-ctx.Done():
		t.Fatal("proxy did not exit")
	}
	if err := capw.Close(); err != nil {
		t.Fatal(err)
	}
	client.mu.Lock()
	got := client.methods
	client.mu.Unlock()
	if len(got) != 1 || !strings.HasPrefix(got[0], `_cursor/task {"toolCallId":"toolu_01A7c3e9f2b4d6a8c0e1f3b5"`) {
		t.Errorf("P7: the SDK's extension handler got %q, want _cursor/task alone", got)
	}
	sdkAnswer, proxyTaskReply := false, false
	for _, line := range strings.Split(rec.String(), "\n") {
		if strings.Contains(line, `"from":"client"`) && strings.Contains(line, `"handledBy":"go-sdk"`) {
			sdkAnswer = true
		}
		if strings.Contains(line, `"op":"reply"`) && strings.Contains(line, `"to":"agent"`) && strings.Contains(line, `"id":1,"result":{}`) {
			proxyTaskReply = true // C1's {} for _cursor/task (id 1)
		}
	}
	if !sdkAnswer || proxyTaskReply {
		t.Errorf("P7: the SDK's answer must reach the agent (%v) and the proxy send none (%v)", sdkAnswer, proxyTaskReply)
	}
	plans := 0
	client.mu.Lock()
	for _, u := range client.updates {
		if u.Update.Plan != nil {
			plans++
		}
	}
	client.mu.Unlock()
	if plans == 0 {
		t.Error("C8: no plan update: the rules other than the one for _cursor/task must still apply")
	}
}

// signalWriter closes seen once a write contains mark.
type signalWriter struct {
	w    io.Writer
	mark []byte
	once sync.Once
	seen chan struct{}
}

func (s *signalWriter) Write(p []byte) (int, error) {
	n, err := s.w.Write(p)
	if bytes.Contains(p, s.mark) {
		s.once.Do(func() { close(s.seen) })
	}
	return n, err
}

//go:build unix

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acp-normalize/acp-normalize/internal/acpschema"
)

// componentProc is the real binary run with no agent command: a
// conductor's proxy component (rule K1), driven by the test as its
// conductor.
type componentProc struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *bufio.Reader
	stderr *bytes.Buffer
}

func startComponentProc(t *testing.T, args ...string) *componentProc {
	t.Helper()
	cmd := exec.Command(proxyBinary, args...)
	cmd.Env = append(cmd.Environ(), "NO_COLOR=1")
	stderr := &bytes.Buffer{}
	cmd.Stderr = stderr
	stdin, stdout := startPiped(t, cmd)
	p := &componentProc{t: t, cmd: cmd, stdin: stdin, stdout: bufio.NewReader(stdout), stderr: stderr}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return p
}

func (p *componentProc) send(frame string) {
	p.t.Helper()
	if _, err := io.WriteString(p.stdin, frame+"\n"); err != nil {
		p.t.Fatal(err)
	}
}

func (p *componentProc) next() []byte {
	p.t.Helper()
	line, err := p.stdout.ReadBytes('\n')
	if err != nil {
		p.t.Fatalf("reading the component: %v (stderr: %s)", err, p.stderr)
	}
	return bytes.TrimSuffix(line, []byte("\n"))
}

// exit closes stdin and waits (a hang is a failure, bounded).
func (p *componentProc) exit() int {
	p.t.Helper()
	_ = p.stdin.Close()
	_, _ = io.Copy(io.Discard, p.stdout)
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			p.t.Fatal(err)
		}
		return 0
	case <-time.After(time.Minute):
		p.t.Fatalf("the component did not exit after its stdin closed; stderr: %s", p.stderr)
		return -1
	}
}

// member returns a top-level member of a frame.
func member(t *testing.T, frame []byte, name string) json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(frame, &m); err != nil {
		t.Fatalf("%s: %v", frame, err)
	}
	return m[name]
}

// validDef fails the test unless value is valid as def of the v1 schema.
func validDef(t *testing.T, s *acpschema.Schema, def string, value []byte) {
	t.Helper()
	if err := s.ValidateDef(def, value); err != nil {
		t.Fatalf("not a valid %s: %v\n%s", def, err, value)
	}
}

// K1 with the Rust conductor (agent-client-protocol-conductor, not
// runnable here: crates.io is out of reach), from the shapes of the v1
// unstable schema the conductor speaks: proxy/initialize
// (InitializeProxyRequest) is answered only after an initialize went to
// the successor through proxy/successor (ProxySuccessorRequest), and the
// answer is an InitializeProxyResponse with the protocol version
// unchanged; later frames travel in ProxySuccessorRequest/Notification
// envelopes, unwrapped on the way in (K2).
func TestK1ComponentRustConductorShapes(t *testing.T) {
	t.Parallel()
	s, err := acpschema.Load(1)
	if err != nil {
		t.Fatal(err)
	}
	p := startComponentProc(t)

	initParams := `{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":true,"writeTextFile":true},"terminal":false},"clientInfo":{"name":"zed","version":"0.220.0"}}`
	validDef(t, s, "InitializeProxyRequest", []byte(initParams))
	p.send(`{"jsonrpc":"2.0","id":0,"method":"proxy/initialize","params":` + initParams + `}`)

	fwd := p.next()
	if string(member(t, fwd, "method")) != `"proxy/successor"` || string(member(t, fwd, "id")) != "0" {
		t.Fatalf("want the initialize forwarded through proxy/successor first, got %s", fwd)
	}
	env := member(t, fwd, "params")
	validDef(t, s, "ProxySuccessorRequest", env)
	if string(member(t, env, "method")) != `"initialize"` || string(member(t, env, "params")) != initParams {
		t.Fatalf("forwarded %s, want initialize with the params as sent", env)
	}
	validDef(t, s, "InitializeRequest", member(t, env, "params"))

	answer := `{"protocolVersion":1,"agentCapabilities":{"loadSession":true,"promptCapabilities":{"image":true}},"agentInfo":{"name":"qwen-code","version":"0.24.4"},"authMethods":[]}`
	validDef(t, s, "InitializeResponse", []byte(answer))
	p.send(`{"jsonrpc":"2.0","id":0,"result":` + answer + `}`)
	res := p.next()
	if string(member(t, res, "id")) != "0" {
		t.Fatalf("answer %s: want id 0 (the proxy/initialize)", res)
	}
	result := member(t, res, "result")
	validDef(t, s, "InitializeProxyResponse", result)
	if string(member(t, result, "protocolVersion")) != "1" {
		t.Fatalf("protocolVersion changed: %s", result)
	}
	if !bytes.Contains(result, []byte(`"acp-normalize":{"modules":[`)) {
		t.Fatalf("no rule M advertisement in %s", result)
	}

	// The successor's notification, wrapped by the conductor.
	update := `{"sessionId":"s-1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}`
	wrapped := `{"method":"session/update","params":` + update + `}`
	validDef(t, s, "ProxySuccessorNotification", []byte(wrapped))
	p.send(`{"jsonrpc":"2.0","method":"proxy/successor","params":` + wrapped + `}`)
	got := p.next()
	if want := `{"jsonrpc":"2.0","method":"session/update","params":` + update + `}`; string(got) != want {
		t.Fatalf("unwrapped %s, want %s", got, want)
	}
	if err := s.Validate(acpschema.FromAgent, "", got); err != nil {
		t.Fatalf("unwrapped frame: %v", err)
	}

	// A client request and notification go out wrapped.
	p.send(`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/work","mcpServers":[]}}`)
	req := p.next()
	if string(member(t, req, "method")) != `"proxy/successor"` || string(member(t, req, "id")) != "1" {
		t.Fatalf("session/new went out as %s", req)
	}
	validDef(t, s, "ProxySuccessorRequest", member(t, req, "params"))
	p.send(`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s-1"}}`)
	note := p.next()
	if string(member(t, note, "method")) != `"proxy/successor"` || member(t, note, "id") != nil {
		t.Fatalf("session/cancel went out as %s", note)
	}
	validDef(t, s, "ProxySuccessorNotification", member(t, note, "params"))
	// The answer under the wrapper's id is the successor's: the client gets it.
	p.send(`{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s-1"}}`)
	if got := string(p.next()); got != `{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s-1"}}` {
		t.Fatalf("session/new answer %s", got)
	}
	if code := p.exit(); code != 0 {
		t.Fatalf("exit %d at the conductor's EOF, want 0; stderr: %s", code, p.stderr)
	}
}

// K3 through the binary: one line on stderr, exit 2, an error response to
// the request, nothing else on stdout.
func TestK3ComponentHandshakeUsage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		args   []string
		first  string
		want   string
		prefix string // what comes before the first frame: a BOM and blank lines are no frame (F1)
	}{
		{"no agent command, no handshake", nil,
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`, `no agent command, and the client began with "initialize"`, ""},
		{"no agent command, client sends nothing", nil, "", "no agent command, and the client sent nothing", ""},
		{"agent command with the TypeScript handshake", []string{"--", "cat"},
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"_meta":{"proxy":true}}}`, "initialize with _meta.proxy, TypeScript conductor), but an agent command was given", ""},
		{"agent command with proxy/initialize", []string{"--", "cat"},
			`{"jsonrpc":"2.0","id":1,"method":"proxy/initialize","params":{"protocolVersion":1}}`, "proxy/initialize, Rust conductor), but an agent command was given", ""},
		{"agent command, a BOM on a line of its own before the handshake", []string{"--", "cat"},
			`{"jsonrpc":"2.0","id":1,"method":"proxy/initialize","params":{"protocolVersion":1}}`, "proxy/initialize, Rust conductor), but an agent command was given", "\xEF\xBB\xBF\n"},
		{"agent command, a BOM and blank CRLF lines before the handshake", []string{"--", "cat"},
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"_meta":{"proxy":true}}}`, "initialize with _meta.proxy, TypeScript conductor), but an agent command was given", "\xEF\xBB\xBF\r\n \r\n"},
		{"no agent command, a BOM on a line of its own before no handshake", nil,
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`, `no agent command, and the client began with "initialize"`, "\xEF\xBB\xBF\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command(proxyBinary, tt.args...)
			cmd.Env = append(cmd.Environ(), "NO_COLOR=1")
			if tt.first != "" {
				cmd.Stdin = strings.NewReader(tt.prefix + tt.first + "\n")
			}
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != exitUsage {
				t.Fatalf("err %v, want exit 2; stderr: %s", err, stderr.String())
			}
			lines := strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n")
			var ours []string
			for _, l := range lines {
				if strings.HasPrefix(l, "acp-normalize: ") {
					ours = append(ours, l)
				}
			}
			if len(ours) != 1 || !strings.Contains(ours[0], tt.want) {
				t.Fatalf("stderr %q: want one acp-normalize: line with %q", stderr.String(), tt.want)
			}
			if strings.Contains(stderr.String(), "WRN") {
				t.Fatalf("stderr %q: a warning besides the one line", stderr.String())
			}
			if tt.first != "" {
				if got := stdout.String(); !strings.HasPrefix(got, `{"jsonrpc":"2.0","id":1,"error":{"code":-32600,`) || strings.Count(got, "\n") != 1 {
					t.Fatalf("stdout %q: want only the error response to id 1", got)
				}
			}
		})
	}
}

// A recording made in component mode replays (R3) and renders: the
// successor's wrapped frames appear unwrapped, as the modules saw them,
// and the timeline says the capture is a component's.
func TestK2ComponentRecordingReplays(t *testing.T) {
	t.Parallel()
	rec := filepath.Join(t.TempDir(), "component.jsonl")
	p := startComponentProc(t, "--record", rec)
	p.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{},"_meta":{"proxy":true}}}`)
	p.next()
	p.send(`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"agentCapabilities":{},"agentInfo":{"name":"qwen-code","version":"0.24.4"}}}`)
	p.next()
	p.send(`{"jsonrpc":"2.0","id":7,"method":"_proxy/successor/request","params":{"method":"craft/drainMidTurnQueue","params":{"sessionId":"s"}}}`)
	answer := p.next() // V7: the proxy answers it -32601, plain, to the wrapper's id
	if !strings.HasPrefix(string(answer), `{"jsonrpc":"2.0","id":7,"error":{"code":-32601`) {
		t.Fatalf("answer %s", answer)
	}
	p.send(`{"jsonrpc":"2.0","method":"_proxy/successor/notification","params":{"method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hello from the successor"}}}}}`)
	p.next()
	if code := p.exit(); code != 0 {
		t.Fatalf("exit %d; stderr %s", code, p.stderr)
	}
	// The real binary, not run(): this test is parallel, and run() in two
	// tests at once races on urfave/cli's package-level help and version
	// flags (seen under -race -count=3).
	code, pretty, stderr := runBinary(t, "replay", "--format", "pretty", rec)
	if code != 0 {
		t.Fatalf("replay exit %d: %s", code, stderr)
	}
	for _, want := range []string{"as a conductor's proxy component", "craft/drainMidTurnQueue", "hello from the successor"} {
		if !strings.Contains(pretty, want) {
			t.Errorf("timeline lacks %q:\n%s", want, pretty)
		}
	}
	if strings.Contains(pretty, "_proxy/successor") {
		t.Errorf("timeline shows the wrappers:\n%s", pretty)
	}
	code, out, stderr := runBinary(t, "replay", rec)
	if code != 0 {
		t.Fatalf("replay exit %d: %s", code, stderr)
	}
	if !strings.Contains(out, `{"to":"agent","frame":{"jsonrpc":"2.0","id":7,"error":{"code":-32601`) {
		t.Errorf("replay does not reproduce the proxy's answer to the successor:\n%s", out)
	}
}

// TestK3HandshakeWithoutNewline: a client stream that ends with its
// first frame and no newline still has that frame relayed (F1), so the
// K3 guard looks at it too: a handshake there is a usage error (exit 2),
// not a frame for the agent; any other frame reaches the agent.
func TestK3HandshakeWithoutNewline(t *testing.T) {
	t.Parallel()
	const handshake = `{"jsonrpc":"2.0","id":1,"method":"proxy/initialize","params":{"protocolVersion":1}}`
	tests := []struct {
		name  string
		input string
		code  int
	}{
		{"the handshake", handshake, exitUsage},
		{"a BOM on a line of its own, then the handshake", "\xEF\xBB\xBF\r\n" + handshake, exitUsage},
		{"an initialize", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command(proxyBinary, "--", "cat")
			cmd.Env = append(cmd.Environ(), "NO_COLOR=1")
			cmd.Stdin = strings.NewReader(tt.input)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			code := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != tt.code {
				t.Fatalf("exit %d, want %d; stdout %q; stderr %q", code, tt.code, stdout.String(), stderr.String())
			}
			if tt.code == exitUsage && !strings.Contains(stderr.String(), "but an agent command was given") {
				t.Errorf("stderr %q: no K3 line", stderr.String())
			}
		})
	}
}

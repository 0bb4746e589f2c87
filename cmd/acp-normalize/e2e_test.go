//go:build unix

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/acp-normalize/acp-normalize/rewrite"
)

// proxySession is a running proxy in front of the fake agent.
type proxySession struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *bufio.Reader
	stderr *bytes.Buffer
	done   chan struct{}
}

// script writes a fake agent script and returns its path.
func script(t *testing.T, lines ...string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "agent.script")
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// start runs `acp-normalize FLAGS -- <test binary>` with the fake agent
// script; extraEnv are KEY=VALUE pairs.
func start(t *testing.T, scriptPath string, flags []string, extraEnv ...string) *proxySession {
	t.Helper()
	// A generous default grace: on a loaded machine a fake agent may need
	// seconds to drain its input after EOF. Tests of F5 pass their own.
	args := append(append([]string{"--kill-grace", "30s"}, flags...), "--")
	return startArgs(t, scriptPath, append(args, fakeAgentArgv(t)...), extraEnv...)
}

// fakeAgentArgv is the command line of the fake agent (this test binary).
func fakeAgentArgv(t *testing.T) []string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return []string{self, "-test.run=^$"}
}

// startArgs runs `acp-normalize ARGS` with the fake agent script.
func startArgs(t *testing.T, scriptPath string, args []string, extraEnv ...string) *proxySession {
	t.Helper()
	cmd := exec.Command(proxyBinary, args...)
	cmd.Env = append(append(os.Environ(), envFakeAgent+"="+scriptPath, "NO_COLOR=1"), extraEnv...)
	stderr := &bytes.Buffer{}
	cmd.Stderr = stderr
	stdin, stdout := startPiped(t, cmd)
	s := &proxySession{t: t, cmd: cmd, stdin: stdin, stdout: bufio.NewReaderSize(stdout, 1<<20), stderr: stderr, done: make(chan struct{})}
	t.Cleanup(func() {
		select {
		case <-s.done:
		default:
			_ = cmd.Process.Kill()
		}
	})
	return s
}

func (s *proxySession) send(lines ...string) {
	s.t.Helper()
	for _, l := range lines {
		if _, err := io.WriteString(s.stdin, l+"\n"); err != nil {
			s.t.Fatalf("writing to proxy: %v", err)
		}
	}
}

// readAll reads stdout to EOF.
func (s *proxySession) readAll() string {
	s.t.Helper()
	b, err := io.ReadAll(s.stdout)
	if err != nil {
		s.t.Fatalf("reading proxy stdout: %v", err)
	}
	return string(b)
}

// readLine reads one stdout line (without the newline).
func (s *proxySession) readLine() string {
	s.t.Helper()
	l, err := s.stdout.ReadString('\n')
	if err != nil {
		s.t.Fatalf("reading proxy stdout: %v (got %q; stderr: %s)", err, l, s.stderr.String())
	}
	return strings.TrimSuffix(l, "\n")
}

// wait waits for the proxy to exit (at most limit: a hang is a failure,
// not a timing assertion) and returns its exit code.
func (s *proxySession) wait(limit time.Duration) int {
	s.t.Helper()
	errc := make(chan error, 1)
	go func() { errc <- s.cmd.Wait() }()
	select {
	case err := <-errc:
		close(s.done)
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				return 128 + int(ws.Signal())
			}
			return ee.ExitCode()
		}
		if err != nil {
			s.t.Fatalf("wait: %v", err)
		}
		return 0
	case <-time.After(limit):
		_ = s.cmd.Process.Kill()
		s.t.Fatalf("proxy did not exit within %v; stderr:\n%s", limit, s.stderr.String())
		return -1
	}
}

// trickyFrames are valid JSON lines a decode/re-encode would alter.
var trickyFrames = []string{
	`{"jsonrpc":"2.0","method":"session/update","params":{"z":1,"a":2,"html":"<b>&amp;</b>","esc":"\u00e9\u2028\/","big":12345678901234567890123,"f":1.0e+2}}`,
	`{ "id" : -5 , "jsonrpc" : "2.0" , "method" : "fs/read_text_file" , "params" : { } }`,
	`{"jsonrpc":"2.0","id":"x\ny","result":{"dup":1,"dup":2}}`,
	`{"jsonrpc":"2.0","id":null,"method":"_weird/null-id"}`,
	`[{"jsonrpc":"2.0","method":"batch/one"},{"jsonrpc":"2.0","method":"batch/two"}]`,
	`{"jsonrpc":"2.0","method":"session/update","params":{"text":"` + "caf\xc3\xa9 \xff invalid utf8" + `"}}`,
}

func TestE2EByteExactBothWays(t *testing.T) {
	// P1: frames leave the proxy with the exact bytes they arrived with, in
	// both directions. The agent writes its own tricky frames, then echoes
	// the client's back, so the client sees both directions' output.
	big := `{"jsonrpc":"2.0","method":"session/update","params":{"text":"` + strings.Repeat("é<>&", 300_000) + `"}}`
	var lines []string
	for _, f := range trickyFrames {
		lines = append(lines, "out "+f)
	}
	lines = append(lines, "out "+big, "echo")
	s := start(t, script(t, lines...), nil)
	clientFrames := append(append([]string{}, trickyFrames...), big)
	s.send(clientFrames...)
	s.stdin.Close()
	got := s.readAll()
	want := strings.Join(append(append(append([]string{}, trickyFrames...), big), clientFrames...), "\n") + "\n" +
		// F6: the echoed client requests were never answered by the agent.
		`{"jsonrpc":"2.0","id":-5,"error":{"code":-32603,"message":"agent exited"}}` + "\n" +
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"agent exited"}}` + "\n"
	if got != want {
		t.Fatalf("output differs from input (got %d bytes, want %d)\n%s", len(got), len(want), firstDiff(got, want))
	}
	if code := s.wait(20 * time.Second); code != 0 {
		t.Fatalf("exit code %d; stderr:\n%s", code, s.stderr.String())
	}
}

func firstDiff(a, b string) string {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			lo := max(0, i-60)
			return fmt.Sprintf("first difference at byte %d:\n got …%q\nwant …%q", i, a[lo:min(len(a), i+60)], b[lo:min(len(b), i+60)])
		}
	}
	return "one is a prefix of the other"
}

func TestE2EOrder10kInterleaved(t *testing.T) {
	// P2: 10k client frames, each answered by an agent notification and its
	// echo, arrive complete and in order.
	const n = 10_000
	s := start(t, script(t, "interleave"), nil)
	go func() {
		w := bufio.NewWriter(s.stdin)
		for i := range n {
			fmt.Fprintf(w, `{"jsonrpc":"2.0","method":"_c","params":{"i":%d}}`+"\n", i)
		}
		w.Flush()
		s.stdin.Close()
	}()
	for i := range n {
		if got, want := s.readLine(), fmt.Sprintf(`{"jsonrpc":"2.0","method":"_n","params":{"i":%d}}`, i); got != want {
			t.Fatalf("frame %d: got %s, want %s", 2*i, got, want)
		}
		if got, want := s.readLine(), fmt.Sprintf(`{"jsonrpc":"2.0","method":"_c","params":{"i":%d}}`, i); got != want {
			t.Fatalf("frame %d: got %s, want %s", 2*i+1, got, want)
		}
	}
	if rest := s.readAll(); rest != "" {
		t.Fatalf("extra output: %q", rest)
	}
	if code := s.wait(20 * time.Second); code != 0 {
		t.Fatalf("exit code %d", code)
	}
}

func TestE2EFraming(t *testing.T) {
	// F1: BOM, CRLF and blank lines on the agent's stream; F2: its non-JSON
	// line is dropped and logged.
	raw := filepath.Join(t.TempDir(), "raw")
	if err := os.WriteFile(raw, []byte("\xEF\xBB\xBF{\"a\":1}\r\n\r\n\nUsing worktree: /tmp/w\n{\"b\":2}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := start(t, script(t, "outfile "+raw), nil)
	s.stdin.Close()
	if got := s.readAll(); got != "{\"a\":1}\n{\"b\":2}\n" {
		t.Fatalf("stdout = %q", got)
	}
	s.wait(20 * time.Second)
	if !strings.Contains(s.stderr.String(), "non-JSON line dropped") || !strings.Contains(s.stderr.String(), "Using worktree") {
		t.Fatalf("stderr lacks the F2 warning:\n%s", s.stderr.String())
	}
}

func TestE2ENonJSONForwardEnvTwin(t *testing.T) {
	// F2 with ACP_NORMALIZE_NON_JSON=forward (the env twin of --non-json).
	s := start(t, script(t, "out Using worktree: /tmp/w", `out {"a":1}`), nil, "ACP_NORMALIZE_NON_JSON=forward")
	s.stdin.Close()
	if got := s.readAll(); got != "Using worktree: /tmp/w\n{\"a\":1}\n" {
		t.Fatalf("stdout = %q", got)
	}
	s.wait(20 * time.Second)
}

func TestE2EExitCodeMirrored(t *testing.T) {
	t.Parallel()
	// F6: the proxy exits with the agent's code, 128+N for signal N.
	tests := []struct {
		name   string
		script []string
		want   int
	}{
		{"F6 exit 0", []string{"exit 0"}, 0},
		{"F6 exit 42", []string{"exit 42"}, 42},
		{"F6 killed by SIGTERM", []string{"kill-self TERM"}, 128 + 15},
		{"F6 killed by SIGKILL", []string{"kill-self KILL"}, 128 + 9},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := start(t, script(t, tt.script...), nil)
			if code := s.wait(20 * time.Second); code != tt.want {
				t.Fatalf("exit code %d, want %d; stderr:\n%s", code, tt.want, s.stderr.String())
			}
		})
	}
}

func TestE2EPendingRequestsAnsweredWhenAgentDies(t *testing.T) {
	t.Parallel()
	// F6: output written before the agent died is delivered, then each
	// unanswered client request gets -32603, while the client's stdin is
	// still open.
	s := start(t, script(t,
		"wait session/prompt",
		`out {"jsonrpc":"2.0","method":"session/update","params":{"last":"words"}}`,
		"exit 3"), nil)
	s.send(`{"jsonrpc":"2.0","id":"n","method":"session/new","params":{}}`,
		`{"jsonrpc":"2.0","id":7,"method":"session/prompt","params":{}}`)
	got := s.readAll()
	want := `{"jsonrpc":"2.0","method":"session/update","params":{"last":"words"}}` + "\n" +
		`{"jsonrpc":"2.0","id":"n","error":{"code":-32603,"message":"agent exited"}}` + "\n" +
		`{"jsonrpc":"2.0","id":7,"error":{"code":-32603,"message":"agent exited"}}` + "\n"
	if got != want {
		t.Fatalf("stdout:\n%s\nwant:\n%s", got, want)
	}
	if code := s.wait(20 * time.Second); code != 3 {
		t.Fatalf("exit code %d, want 3", code)
	}
}

func TestE2EKillEscalation(t *testing.T) {
	t.Parallel()
	// F5: stdin EOF, grace, SIGTERM (ignored), grace, SIGKILL.
	s := start(t, script(t, "ignore-term", `out {"jsonrpc":"2.0","method":"_test/ready"}`, "sleep 60s"), []string{"--kill-grace", "200ms", "--log-level", "debug"})
	// The agent says it ignores SIGTERM before stdin closes: on a loaded
	// machine the grace could otherwise run out before it got that far.
	if l := s.readLine(); !strings.Contains(l, `_test/ready`) {
		t.Fatalf("first line %q, want the agent's ready marker", l)
	}
	s.stdin.Close()
	if code := s.wait(20 * time.Second); code != 128+9 {
		t.Fatalf("exit code %d, want 137; stderr:\n%s", code, s.stderr.String())
	}
	for _, want := range []string{"sending SIGTERM", "sending SIGKILL"} {
		if !strings.Contains(s.stderr.String(), want) {
			t.Fatalf("stderr lacks %q:\n%s", want, s.stderr.String())
		}
	}
}

func TestE2EAgentExitsAfterStdinEOF(t *testing.T) {
	t.Parallel()
	// F5: an agent that exits by itself within the grace gets no signal.
	s := start(t, script(t, "echo", "exit 0"), []string{"--log-level", "debug"})
	s.stdin.Close()
	if code := s.wait(20 * time.Second); code != 0 {
		t.Fatalf("exit code %d", code)
	}
	if strings.Contains(s.stderr.String(), "SIGTERM") {
		t.Fatalf("agent was signalled:\n%s", s.stderr.String())
	}
}

// alive reports whether pid exists and is not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return syscall.Kill(pid, 0) == nil
	}
	fields := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	return len(fields) > 0 && fields[0] != "Z" && fields[0] != "X"
}

func readPids(t *testing.T, path string) []int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		b, err := os.ReadFile(path)
		if err == nil && strings.HasSuffix(string(b), "\n") {
			var pids []int
			for _, f := range strings.Fields(string(b)) {
				n, _ := strconv.Atoi(f)
				pids = append(pids, n)
			}
			return pids
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("fake agent did not write its pids")
	return nil
}

func waitGone(t *testing.T, pids []int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		left := 0
		for _, p := range pids {
			if alive(p) {
				left++
			}
		}
		if left == 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, p := range pids {
		if alive(p) {
			_ = syscall.Kill(p, syscall.SIGKILL)
			t.Errorf("process %d outlived the proxy", p)
		}
	}
}

func TestE2ESignalToProxyLeavesNoOrphan(t *testing.T) {
	t.Parallel()
	// F5: SIGTERM to the proxy is forwarded to the agent's process group:
	// the agent and its own child both end, and the proxy mirrors the code.
	pidfile := filepath.Join(t.TempDir(), "pids")
	s := start(t, script(t, "spawn "+pidfile, "sleep 60s"), []string{"--kill-grace", "2s"})
	pids := readPids(t, pidfile)
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := s.wait(20 * time.Second); code != 128+15 {
		t.Fatalf("exit code %d, want 143; stderr:\n%s", code, s.stderr.String())
	}
	waitGone(t, pids)
}

func TestE2EParentDeathKillsAgent(t *testing.T) {
	t.Parallel()
	// F5 (Linux): an agent cannot outlive a SIGKILLed proxy.
	if _, err := os.Stat("/proc/self"); err != nil {
		t.Skip("no /proc: not Linux")
	}
	pidfile := filepath.Join(t.TempDir(), "pids")
	s := start(t, script(t, "spawn "+pidfile, "sleep 60s"), nil)
	pids := readPids(t, pidfile)
	if err := s.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	s.wait(20 * time.Second)
	waitGone(t, pids) // the agent and its own child (see also lifecycle_e2e_test.go)
}

func TestE2EStdoutCarriesOnlyFrames(t *testing.T) {
	// F7: at --log-level debug, with agent stderr and a log file, stdout
	// has protocol frames only; logs and the agent's stderr go to stderr and
	// the log file (F4).
	logFile := filepath.Join(t.TempDir(), "proxy.log")
	s := start(t, script(t, "err agent says hello on stderr", `out {"jsonrpc":"2.0","method":"_x"}`, "out not json", "echo"),
		[]string{"--log-level", "debug", "--log-file", logFile})
	s.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`)
	s.stdin.Close()
	out := s.readAll()
	s.wait(20 * time.Second)
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if !json.Valid([]byte(line)) {
			t.Fatalf("stdout line is not a frame: %q", line)
		}
	}
	if !strings.Contains(s.stderr.String(), "agent says hello on stderr") {
		t.Fatalf("agent stderr not copied to stderr:\n%s", s.stderr.String())
	}
	logged, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"agent says hello on stderr", "level=DEBUG", "non-JSON line dropped"} {
		if !strings.Contains(string(logged), want) {
			t.Fatalf("log file lacks %q:\n%s", want, logged)
		}
	}
}

func TestE2EInitializeAdvertisement(t *testing.T) {
	// M: the initialize response says the stream is normalized.
	s := start(t, script(t, "wait initialize", `out {"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{"loadSession":true}}}`), nil)
	s.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`)
	s.stdin.Close()
	got := s.readAll()
	s.wait(20 * time.Second)
	var resp struct {
		Result struct {
			AgentCapabilities struct {
				Meta map[string]struct {
					Version string   `json:"version"`
					Modules []string `json:"modules"`
				} `json:"_meta"`
			} `json:"agentCapabilities"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(got), &resp); err != nil {
		t.Fatalf("%v: %s", err, got)
	}
	adv, ok := resp.Result.AgentCapabilities.Meta["acp-normalize"]
	// The same version as the binary prints (rule M).
	if want := binaryVersion(t, proxyBinary); !ok || adv.Version != want || adv.Modules == nil {
		t.Fatalf("no advertisement of version %s in %s", want, got)
	}
}

func TestE2ERecording(t *testing.T) {
	// R1/R2: the capture has start, inputs (client, agent, stderr), outputs
	// and exit records; secrets are redacted; the file is private.
	dir := t.TempDir()
	rec := filepath.Join(dir, "session.jsonl")
	s := start(t, script(t, "err stderr line", "err fetching https://me:stderr-pass@example.com", "wait initialize",
		`out {"jsonrpc":"2.0","id":1,"result":{"token":"agent-secret","note":"{\"privateKey\":\"args-secret\"}","hint":"Authorization: Basic dXNlcjpiYXNpYy1zZWNyZXQ="}}`),
		[]string{"--record", rec})
	s.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"clientInfo":{"apiKey":"sk-123"}}}`)
	s.stdin.Close()
	s.readAll()
	s.wait(20 * time.Second)
	data := readPrivateCapture(t, rec)
	text := string(data)
	for _, want := range []string{`"event":"start"`, `"from":"client","frame":{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"clientInfo":{"apiKey":"<redacted>"}}}`,
		`"from":"agent","stderr":"stderr line"`, `"op":"replace","to":"client"`, `"event":"exit","code":0`} {
		if !strings.Contains(text, want) {
			t.Fatalf("capture lacks %s:\n%s", want, text)
		}
	}
	// R2 as strengthened: JSON in a string, Basic, URL passwords.
	for _, secret := range []string{"sk-123", "agent-secret", "args-secret", "dXNlcjpiYXNpYy1zZWNyZXQ", "stderr-pass"} {
		if strings.Contains(text, secret) {
			t.Fatalf("capture leaks %q:\n%s", secret, text)
		}
	}
}

func TestE2EUsageErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no agent command, nothing on stdin (K3)", nil, 2, "no agent command, and the client sent nothing"},
		{"agent not found", []string{"--", "no-such-agent-xyz"}, 2, `agent "no-such-agent-xyz" not found`},
		{"subcommand name after -- is the agent", []string{"--", "replay", "x"}, 2, `agent "replay" not found`},
		{"mistyped command without --", []string{"replya", "x"}, 2, `agent "replya" not found: executable file not found in $PATH; nor is it a command (probe, replay, export, check, mock-agent, version, help; see acp-normalize --help)`},
		{"help after -- is the agent", []string{"--", "help"}, 2, `agent "help" not found`},
		{"agent not executable", []string{"--", "../../README.md"}, 2, `cannot run agent "../../README.md"`},
		{"agent with a missing #! interpreter", []string{"--", badAgent(t, "bad-interpreter", "#!/nonexistent/interpreter\n")}, 2, `bad-interpreter": `},
		{"agent that is an empty file", []string{"--", badAgent(t, "empty", "")}, 2, `empty": `},
		{"bad flag", []string{"--no-such-flag", "--", "true"}, 2, "unknown flag --no-such-flag (see acp-normalize --help)"},
		{"bad duration", []string{"--kill-grace", "soon", "--", "true"}, 2, `--kill-grace: invalid value "soon": want a duration such as 3s or 500ms`},
		{"bad boolean", []string{"--record-raw=maybe", "--", "true"}, 2, `--record-raw: invalid value "maybe": want true or false`},
		{"flag without its value", []string{"--record"}, 2, "--record needs a value"},
		{"bad non-json", []string{"--non-json", "maybe", "--", "true"}, 2, "--non-json must be drop or forward"},
		{"bad module", []string{"--modules", "nope", "--", "true"}, 2, `unknown module "nope"`},
		{"bad vendor", []string{"--vendor", "nope", "--", "true"}, 2, `--vendor: unknown vendor "nope" (have: ` + strings.Join(rewrite.VendorNames(allModules()), ", ") + ")"},
		{"vendor that is no vendor module", []string{"--vendor", "cursor", "--", "true"}, 2, `unknown vendor "cursor"`},
		{"bad log level", []string{"--log-level", "loud", "--", "true"}, 2, "--log-level"},
		{"version", []string{"--version"}, 0, "acp-normalize " + binaryVersion(t, proxyBinary) + " ("},
		{"agent exit code through", []string{"--", "false"}, 1, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command(proxyBinary, tt.args...)
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			err := cmd.Run()
			code := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			}
			if code != tt.code || !strings.Contains(out.String(), tt.want) {
				t.Fatalf("exit %d, output %q; want exit %d with %q", code, out.String(), tt.code, tt.want)
			}
			if code == exitUsage && strings.Count(out.String(), "\n") != 1 {
				t.Fatalf("output %q: want one line", out.String())
			}
		})
	}
}

// badAgent writes an executable file that cannot be run (rule F4: the
// proxy says so in one line and exits 2).
func badAgent(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestE2ECompleteFrameNotHeldBehindPartialLine(t *testing.T) {
	// P2: a complete frame followed, in the same read, by the start of the
	// next line reaches the client at once, not when the line completes.
	raw := filepath.Join(t.TempDir(), "raw")
	if err := os.WriteFile(raw, []byte("{\"a\":1}\n{\"b\":"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := start(t, script(t, "outfile "+raw, "sleep 30s"), nil)
	got := make(chan string, 1)
	go func() {
		l, _ := s.stdout.ReadString('\n')
		got <- l
	}()
	select {
	case l := <-got:
		if l != "{\"a\":1}\n" {
			t.Fatalf("got %q", l)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the complete frame was held back behind the partial line")
	}
}

func TestE2ELeftoverProcessesEnded(t *testing.T) {
	t.Parallel()
	// F5/F6: processes the agent started and left running when it exited
	// are ended with it (here one with its stdio redirected, which does
	// not hold the agent's stdout open).
	pidfile := filepath.Join(t.TempDir(), "pids")
	s := start(t, script(t, "spawn "+pidfile, "exit 4"), []string{"--kill-grace", "1s"})
	pids := readPids(t, pidfile)
	s.stdin.Close()
	if code := s.wait(20 * time.Second); code != 4 {
		t.Fatalf("exit code %d, want 4", code)
	}
	waitGone(t, pids[1:])
}

func TestE2EGrandchildHoldingStdout(t *testing.T) {
	t.Parallel()
	// F6: a grandchild holds the agent's stdout open after the agent
	// exited: after the grace the group is ended and the code mirrored.
	pidfile := filepath.Join(t.TempDir(), "pids")
	s := start(t, script(t, "spawn-holding "+pidfile, `out {"jsonrpc":"2.0","method":"_bye"}`, "exit 3"), []string{"--kill-grace", "500ms"})
	pids := readPids(t, pidfile)
	if got := s.readLine(); got != `{"jsonrpc":"2.0","method":"_bye"}` {
		t.Fatalf("got %q", got)
	}
	if code := s.wait(20 * time.Second); code != 3 {
		t.Fatalf("exit code %d, want 3; stderr:\n%s", code, s.stderr.String())
	}
	waitGone(t, pids[1:])
}

func TestE2ERecordOverExistingFile(t *testing.T) {
	// R1: the capture is private even when the file existed with a wider
	// mode.
	rec := filepath.Join(t.TempDir(), "session.jsonl")
	if err := os.WriteFile(rec, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := start(t, script(t, "exit 0"), []string{"--record", rec})
	s.stdin.Close()
	s.wait(20 * time.Second)
	data := readPrivateCapture(t, rec)
	if strings.HasPrefix(string(data), "old") {
		t.Fatal("old content not truncated")
	}
}

func TestE2ESignalCancelsOpenCursorRequests(t *testing.T) {
	// C12: when the proxy is shut down by a signal while it holds a Cursor
	// request (a plan awaiting the user's approval), Cursor gets
	// "cancelled" before the signal reaches it.
	s := start(t, script(t,
		"ignore-term",
		"wait session/new",
		`out {"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"}}`,
		"wait session/prompt",
		`out {"jsonrpc":"2.0","id":0,"method":"cursor/create_plan","params":{"toolCallId":"plan-1","name":"Refactor","plan":"# Plan"}}`,
		"wait cancelled",
		"err GOT-CANCELLED",
		"exit 0"), []string{"--kill-grace", "5s"})
	s.send(`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}`)
	s.readLine() // session/new result
	s.send(`{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}`)
	for {
		if l := s.readLine(); strings.Contains(l, `"session/request_permission"`) {
			break
		}
	}
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := s.wait(20 * time.Second); code != 0 {
		t.Fatalf("exit code %d; stderr:\n%s", code, s.stderr.String())
	}
	if !strings.Contains(s.stderr.String(), "GOT-CANCELLED") {
		t.Fatalf("the agent never got cancelled; stderr:\n%s", s.stderr.String())
	}
}

func TestE2EMockAgentWaitsForPlanApproval(t *testing.T) {
	// mock-agent behind the proxy: the recorded Cursor turn goes on only
	// after the editor approved the plan (the answer Cursor got was the
	// proxy's, made from the editor's permission answer).
	cmd := exec.Command(proxyBinary, "--kill-grace", "30s", "--", proxyBinary, "mock-agent", "../../testdata/captures/cursor/todos-and-plan.jsonl")
	stdin, _ := cmd.StdinPipe()
	stdoutPipe, _ := cmd.StdoutPipe()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(stdoutPipe)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	for _, f := range []string{
		`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}`,
		`{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"3f9a1c2e-7b4d-4e8a-9c61-5d2f0b8e4a17","prompt":[]}}`,
	} {
		io.WriteString(stdin, f+"\n")
	}
	var permID string
	for permID == "" {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("stream ended before the plan approval; stderr:\n%s", stderr.String())
			}
			if strings.Contains(l, `"session/request_permission"`) {
				var req struct {
					ID string `json:"id"`
				}
				_ = json.Unmarshal([]byte(l), &req)
				permID = req.ID
			}
			if strings.Contains(l, `"stopReason"`) {
				t.Fatalf("the turn ended before the plan was approved: %s", l)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no plan approval request")
		}
	}
	// Nothing ends the turn while the editor has not answered.
	quiet := time.After(500 * time.Millisecond)
waiting:
	for {
		select {
		case l := <-lines:
			if strings.Contains(l, `"stopReason"`) {
				t.Fatalf("the turn ended while the plan approval was open: %s", l)
			}
		case <-quiet:
			break waiting
		}
	}
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":"`+permID+`","result":{"outcome":{"outcome":"selected","optionId":"accept"}}}`+"\n")
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("stream ended without the end of the turn")
			}
			if strings.Contains(l, `"stopReason"`) {
				stdin.Close()
				return
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the turn did not end after the approval")
		}
	}
}

// readPrivateCapture returns a capture's bytes after checking that only
// its owner can read it (R1: mode 0600).
func readPrivateCapture(t *testing.T, path string) []byte {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("capture mode %v, want 0600", st.Mode().Perm())
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestE2ENonJSONLineLoggedRedacted: the warning about a non-JSON line on
// the agent's stdout (F2) quotes the line on stderr and in --log-file,
// which users attach to bug reports: a secret in it is redacted there as
// in a capture (R2), where it once appeared as the agent wrote it.
func TestE2ENonJSONLineLoggedRedacted(t *testing.T) {
	const key = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123"
	logFile := filepath.Join(t.TempDir(), "proxy.log")
	s := start(t, script(t, "out logged in with ANTHROPIC_API_KEY="+key, "echo"), []string{"--log-file", logFile})
	s.stdin.Close()
	s.readAll()
	s.wait(20 * time.Second)
	logged, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	for where, text := range map[string]string{"stderr": s.stderr.String(), "the log file": string(logged)} {
		if strings.Contains(text, key) || !strings.Contains(text, "non-JSON line dropped") || !strings.Contains(text, "<redacted>") {
			t.Errorf("%s:\n%s", where, text)
		}
	}
}

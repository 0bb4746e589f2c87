package driver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/acp-normalize/acp-normalize/pipe"
)

var update = flag.Bool("update", false, "rewrite testdata/*.jsonl")

// envFakeAgent makes the test binary act as a scripted ACP agent.
const envFakeAgent = "ACP_CAPTURE_FAKE_AGENT"

func TestMain(m *testing.M) {
	if mode := os.Getenv(envFakeAgent); mode != "" {
		os.Exit(fakeAgent(mode))
	}
	os.Exit(m.Run())
}

// fakeAgent answers the driver's requests; during the prompt it asks for
// permission, reads files in and outside the workspace, sends an unknown
// request and one the driver is told to answer, each only after the
// previous answer. Mode "normal" then sends a late notification after the
// prompt response and exits 3; mode "stubborn" ignores SIGTERM and never
// exits by itself.
func fakeAgent(mode string) int {
	if mode == "stubborn" {
		signal.Ignore(syscall.SIGTERM)
	}
	in := bufio.NewScanner(os.Stdin)
	out := bufio.NewWriter(os.Stdout)
	send := func(s string) {
		out.WriteString(s + "\n")
		out.Flush()
	}
	next := func() map[string]json.RawMessage {
		if !in.Scan() {
			os.Exit(9)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(in.Bytes(), &m); err != nil {
			os.Exit(10)
		}
		return m
	}
	if mode == "long-stderr" {
		// One stderr line longer than any fixed line buffer.
		os.Stderr.WriteString(strings.Repeat("x", longStderrLine) + "\n")
	}
	fmt.Fprintln(os.Stderr, "fake agent: starting")
	if mode == "hang" {
		return hangingAgent(next, send)
	}
	ws := os.Getenv("FAKE_WS")
	for {
		req := next()
		id := string(req["id"])
		switch string(req["method"]) {
		case `"initialize"`:
			send(`{"jsonrpc":"2.0","id":` + id + `,"result":{"protocolVersion":1,"agentInfo":{"name":"fake","version":"1"}}}`)
		case `"session/new"`:
			send(`{"jsonrpc":"2.0","id":` + id + `,"result":{"sessionId":"S1"}}`)
		case `"session/set_mode"`:
			send(`{"jsonrpc":"2.0","id":` + id + `,"result":{}}`)
		case `"session/prompt"`:
			send(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"S1","update":{"sessionUpdate":"tool_call","toolCallId":"t1","title":"Agent","status":"pending"}}}`)
			send(`{"jsonrpc":"2.0","id":"p0","method":"session/request_permission","params":{"sessionId":"S1","toolCall":{"toolCallId":"t1"},"options":[{"optionId":"no","name":"Reject","kind":"reject_once"},{"optionId":"always","name":"Always","kind":"allow_always"},{"optionId":"once","name":"Allow","kind":"allow_once"}]}}`)
			next()
			send(`{"jsonrpc":"2.0","id":1,"method":"fs/read_text_file","params":{"sessionId":"S1","path":"` + ws + `/notes.txt","line":2,"limit":1}}`)
			next()
			send(`{"jsonrpc":"2.0","id":2,"method":"fs/read_text_file","params":{"sessionId":"S1","path":"` + ws + `/../secret.txt"}}`)
			next()
			send(`{"jsonrpc":"2.0","id":3,"method":"fs/write_text_file","params":{"sessionId":"S1","path":"` + ws + `/out.txt","content":"written"}}`)
			next()
			send(`{"jsonrpc":"2.0","id":4,"method":"vendor/unknown","params":{}}`)
			next()
			send(`{"jsonrpc":"2.0","id":5,"method":"_vendor/start_turn","params":{}}`)
			next()
			send(`not json at all`)
			send(`{"jsonrpc":"2.0","id":` + id + `,"result":{"stopReason":"end_turn"}}`)
			if mode != "normal" && mode != "stubborn" {
				return 0
			}
			if mode == "stubborn" {
				for in.Scan() {
				}
				// stdin closed: still never exit. A sleep, not an empty
				// select: with no other goroutine the runtime would end
				// the process ("all goroutines are asleep", exit 2).
				for {
					time.Sleep(time.Hour)
				}
			}
			send(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"S1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"late"}}}}`)
			return 3
		}
	}
}

// hangingAgent never answers the prompt until the client sends
// session/cancel, then answers it "cancelled" and exits 0.
func hangingAgent(next func() map[string]json.RawMessage, send func(string)) int {
	var promptID string
	for {
		req := next()
		id := string(req["id"])
		switch string(req["method"]) {
		case `"initialize"`:
			send(`{"jsonrpc":"2.0","id":` + id + `,"result":{"protocolVersion":1}}`)
		case `"session/new"`:
			send(`{"jsonrpc":"2.0","id":` + id + `,"result":{"sessionId":"S1"}}`)
		case `"session/set_mode"`:
			send(`{"jsonrpc":"2.0","id":` + id + `,"result":{}}`)
		case `"session/prompt"`:
			promptID = id
		case `"session/cancel"`:
			send(`{"jsonrpc":"2.0","id":` + promptID + `,"result":{"stopReason":"cancelled"}}`)
			return 0
		}
	}
}

func fixedClock() func() time.Time {
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	return func() time.Time { return t0 }
}

func newConfig(t *testing.T, mode string) (Config, *bytes.Buffer, string) {
	t.Helper()
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("one\ntwo\nthree\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var capture bytes.Buffer
	return Config{
		Argv:      []string{os.Args[0], "-test.run=^$"},
		Env:       []string{envFakeAgent + "=" + mode, "FAKE_WS=" + ws},
		Workspace: ws,
		Capture:   &capture,
		Clock:     fixedClock(),
		ClientFS:  true, ClientSubagents: true, Mode: "default",
		Prompt:  "delegate reading notes.txt",
		Answers: map[string]json.RawMessage{"_vendor/start_turn": json.RawMessage(`{"ok":true}`)},
		Timeout: time.Minute, Linger: time.Minute, LingerMax: time.Minute, KillGrace: 50 * time.Millisecond,
		Scrub: []Replacement{{Old: ws, New: "/ws"}, {Old: os.Args[0], New: "fake-agent"}},
	}, &capture, ws
}

// TestRunRecordsSession drives the fake agent through a whole session and
// compares the capture (stderr lines aside, whose place among the frames
// depends on scheduling) with testdata/session.jsonl byte for byte.
func TestRunRecordsSession(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the fake agent's signal handling is Unix-only")
	}
	cfg, capture, ws := newConfig(t, "normal")
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := Result{StopReason: "end_turn", ExitCode: 3, AgentRequests: map[string]int{
		"session/request_permission": 1, "fs/read_text_file": 2, "fs/write_text_file": 1, "vendor/unknown": 1, "_vendor/start_turn": 1,
	}}
	if !reflect.DeepEqual(res, want) {
		t.Errorf("result %+v, want %+v", res, want)
	}
	if got, _ := os.ReadFile(filepath.Join(ws, "out.txt")); string(got) != "written" {
		t.Errorf("fs/write_text_file wrote %q", got)
	}
	frames, stderr := splitStderr(t, capture.Bytes())
	if !reflect.DeepEqual(stderr, []string{"fake agent: starting"}) {
		t.Errorf("stderr records %q", stderr)
	}
	golden := filepath.Join("testdata", "session.jsonl")
	if *update {
		if err := os.WriteFile(golden, frames, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	wantFrames, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(frames, wantFrames) {
		t.Errorf("capture differs from %s:\n%s", golden, frames)
	}
}

// splitStderr removes the stderr records (renumbering nothing: seq gaps
// stay where they were dropped, so the seq values are masked) and returns
// the rest and the stderr lines.
func splitStderr(t *testing.T, capture []byte) ([]byte, []string) {
	t.Helper()
	var rest bytes.Buffer
	var stderr []string
	for rec, err := range pipe.NewCaptureReader(bytes.NewReader(capture)).Records() {
		if err != nil {
			break
		}
		if rec.Stderr != nil {
			stderr = append(stderr, *rec.Stderr)
			continue
		}
		rec.Seq = 0
		rest.Write(pipe.AppendRecord(nil, &rec))
	}
	return rest.Bytes(), stderr
}

// TestRunKillsStubbornAgent: an agent that outlives its stdin and ignores
// SIGTERM is killed, and the capture still ends with its exit event.
func TestRunKillsStubbornAgent(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("SIGTERM is Unix-only")
	}
	cfg, capture, _ := newConfig(t, "stubborn")
	cfg.Linger = time.Millisecond
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Killed || res.ExitCode != 128+int(syscall.SIGKILL) {
		t.Errorf("killed=%v exit=%d, want killed with SIGKILL", res.Killed, res.ExitCode)
	}
	lines := strings.Split(strings.TrimSpace(capture.String()), "\n")
	if last := lines[len(lines)-1]; !strings.Contains(last, `"event":"exit","code":137`) {
		t.Errorf("last record %s, want the exit event", last)
	}
}

// TestRunCancelsHangingPrompt: with CancelAfter, a prompt the agent never
// answers gets session/cancel, and the session ends normally with the
// agent's "cancelled". Without it the same agent would hang the run until
// Timeout.
func TestRunCancelsHangingPrompt(t *testing.T) {
	cfg, capture, _ := newConfig(t, "hang")
	cfg.CancelAfter = time.Millisecond
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.StopReason != "cancelled" || res.ExitCode != 0 {
		t.Errorf("stopReason %q exit %d, want cancelled and 0", res.StopReason, res.ExitCode)
	}
	want := `"from":"client","frame":{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"S1"}}}`
	if !strings.Contains(capture.String(), want) {
		t.Errorf("no session/cancel recorded:\n%s", capture.String())
	}
}

// longStderrLine is longer than the 16 MiB line limit the stderr reader
// once had: past it, it stopped reading and the agent blocked on stderr.
const longStderrLine = 17 << 20

// TestRunLongStderrLine: an agent that writes a 17 MiB stderr line still
// gets its session, and the line is recorded whole.
func TestRunLongStderrLine(t *testing.T) {
	cfg, capture, _ := newConfig(t, "long-stderr")
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.StopReason != "end_turn" {
		t.Errorf("stopReason %q", res.StopReason)
	}
	_, stderr := splitStderr(t, capture.Bytes())
	if len(stderr) != 2 || len(stderr[0]) != longStderrLine {
		t.Errorf("%d stderr records, want the long line whole and one more", len(stderr))
	}
}

func TestRunRejectsBadConfig(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
	}{
		{"no agent", Config{Workspace: "/ws", Prompt: "p", Capture: &bytes.Buffer{}}},
		{"no workspace", Config{Argv: []string{"x"}, Prompt: "p", Capture: &bytes.Buffer{}}},
		{"no prompt", Config{Argv: []string{"x"}, Workspace: "/ws", Capture: &bytes.Buffer{}}},
		{"no capture", Config{Argv: []string{"x"}, Workspace: "/ws", Prompt: "p"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Run(context.Background(), tt.cfg); err == nil {
				t.Error("Run accepted a bad config")
			}
		})
	}
}

func TestPermissionAnswer(t *testing.T) {
	tests := []struct {
		name, options, want string
	}{
		{"allow_once wins", `[{"optionId":"a","kind":"allow_always"},{"optionId":"o","kind":"allow_once"},{"optionId":"r","kind":"reject_once"}]`, "o"},
		{"allow_always without allow_once", `[{"optionId":"r","kind":"reject_once"},{"optionId":"a","kind":"allow_always"}]`, "a"},
		{"first option otherwise", `[{"optionId":"x","kind":"other"},{"optionId":"y","kind":"reject_once"}]`, "x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, rerr := permissionAnswer(json.RawMessage(`{"options":` + tt.options + `}`))
			if rerr != nil {
				t.Fatal(rerr)
			}
			if got := res.(permissionOutcome).Outcome.OptionID; got != tt.want {
				t.Errorf("chose %q, want %q", got, tt.want)
			}
		})
	}
	if _, rerr := permissionAnswer(json.RawMessage(`{"options":[]}`)); rerr == nil {
		t.Error("no options: want an error")
	}
}

func TestFindForeignPaths(t *testing.T) {
	const scratch = "/tmp/acp-capture/claude"
	tests := []struct {
		name, capture string
		want          []string
	}{
		{"scratch paths only", `{"cwd":"/tmp/acp-capture/claude/ws","f":"/tmp/acp-capture/claude/home/.x"}`, nil},
		{"the scratch folder itself", `{"d":"/tmp/acp-capture/claude"}`, nil},
		{"a sibling of the scratch folder", `{"d":"/tmp/acp-capture/claude2/x"}`, []string{"/tmp/acp-capture/claude2/x"}},
		{"the system temp dir", `{"outputFile":"/tmp/claude-0/-tmp-ws/a.output"}`, []string{"/tmp/claude-0/-tmp-ws/a.output"}},
		{"home and root, each once", `"/home/alice/x" "/root/.npm/y" "/home/alice/x"`, []string{"/home/alice/x", "/root/.npm/y"}},
		{"a tmp folder inside another path", `"see .qwen/tmp/review.json and ~/x/tmp/y"`, nil},
		{"after a backtick in markdown", "run `/work/repo/x` now", []string{"/work/repo/x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := FindForeignPaths([]byte(tt.capture), scratch); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestFindLeaks(t *testing.T) {
	got := FindLeaks([]byte(`{"cwd":"/tmp/acp-capture/ws","x":"/home/alice/repo"}`), []string{"", "/home/alice", "/root", "bob-laptop"})
	if !reflect.DeepEqual(got, []string{"/home/alice"}) {
		t.Errorf("FindLeaks = %v", got)
	}
}

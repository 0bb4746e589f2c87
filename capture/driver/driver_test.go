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
	fmt.Fprintln(os.Stderr, "fake agent: starting")
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
			if mode == "stubborn" {
				for in.Scan() {
				}
				select {} // stdin closed: still never exit
			}
			send(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"S1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"late"}}}}`)
			return 3
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
	r := pipe.NewCaptureReader(bytes.NewReader(capture))
	for {
		rec, err := r.Next()
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

func TestFindLeaks(t *testing.T) {
	got := FindLeaks([]byte(`{"cwd":"/tmp/acp-capture/ws","x":"/home/alice/repo"}`), []string{"", "/home/alice", "/root", "bob-laptop"})
	if !reflect.DeepEqual(got, []string{"/home/alice"}) {
		t.Errorf("FindLeaks = %v", got)
	}
}

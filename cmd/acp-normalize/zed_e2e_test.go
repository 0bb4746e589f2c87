//go:build unix

package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
	"github.com/acp-normalize/acp-normalize/pipe"
)

// TestZedE2E runs the real binary in front of `acp-normalize mock-agent`
// serving the bundled Qwen Code foreground recording, to which the test
// appends a reopen: a session/load of the recorded session, the agent
// replaying the session's recorded session/update notifications, and its
// answer (no recording here has a session/load; an agent that replays its
// history sends that). The client names itself zed and does what Zed
// does (rules Z1-Z4): live, the launch call carries no
// subagent_session_info and its content gets the subagent's progress
// lines; reopened, the replayed launch call carries the key, and Zed's
// load of the child it names is answered by the proxy (the agent never
// sees it) with the prompt first, the frames Qwen linked to the call,
// and {}.
func TestZedE2E(t *testing.T) {
	src := filepath.Join("..", "..", "testdata", "captures", "qwen", "foreground.jsonl")
	recs := readCaptureRecords(t, src)
	const sid = "b34e8943-9225-44b9-9bd6-d2d388ac4cb0"
	var capture bytes.Buffer
	var clientFrames [][]byte
	line := func(from string, frame []byte) {
		fmt.Fprintf(&capture, `{"from":%q,"frame":%s}`+"\n", from, frame)
	}
	for _, r := range recs {
		if r.Frame == nil || (r.From != "client" && r.From != "agent") {
			continue
		}
		frame := []byte(r.Frame)
		if r.From == "client" {
			if string(pipe.Peek(frame).Method) == "initialize" {
				var err error
				if frame, err = rawjson.Set(frame, []byte(`{"name":"zed","version":"0.220.0"}`), "params", "clientInfo"); err != nil {
					t.Fatal(err)
				}
			}
			clientFrames = append(clientFrames, frame)
		}
		line(r.From, frame)
	}
	load := []byte(`{"jsonrpc":"2.0","id":90,"method":"session/load","params":{"sessionId":"` + sid + `","cwd":"/tmp","mcpServers":[]}}`)
	line("client", load)
	for _, r := range recs {
		if r.From == "agent" && string(pipe.Peek(r.Frame).Method) == "session/update" {
			if s, _ := rawjson.LookupString(r.Frame, "params", "sessionId"); s == sid {
				line("agent", r.Frame)
			}
		}
	}
	line("agent", []byte(`{"jsonrpc":"2.0","id":90,"result":{}}`))
	path := filepath.Join(t.TempDir(), "reopen.jsonl")
	if err := os.WriteFile(path, capture.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}

	rec := filepath.Join(t.TempDir(), "session.jsonl")
	cmd := exec.Command(proxyBinary, "--record", rec, "--", proxyBinary, "mock-agent", "--no-stderr", path)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdin, stdout := startPiped(t, cmd)
	send := func(b []byte) {
		if _, err := stdin.Write(append(bytes.Clone(b), '\n')); err != nil {
			t.Fatalf("write: %v", err)
		}
	}
	sc := bufio.NewScanner(stdout)
	sc.Buffer(nil, 16<<20)
	until := func(id string) [][]byte {
		var got [][]byte
		for sc.Scan() {
			f := bytes.Clone(sc.Bytes())
			got = append(got, f)
			if env := pipe.Peek(f); env.Kind == pipe.Response && string(env.ID) == id {
				return got
			}
		}
		t.Fatalf("no answer %s (stderr: %s)", id, stderr.String())
		return nil
	}
	for _, f := range clientFrames {
		send(f)
	}
	live := until("2")
	progress := false
	for _, f := range live {
		if bytes.Contains(f, []byte(`"subagent_session_info"`)) {
			t.Errorf("Z1: a live frame carries Zed's key: %s", f)
		}
		if bytes.Contains(f, []byte(`"progress":true`)) {
			progress = true
		}
	}
	if !progress {
		t.Error("Z4: the live launch call showed no progress")
	}
	send(load)
	var child string
	for _, f := range until("90") {
		if c, ok := rawjson.LookupString(f, "params", "update", "_meta", "subagent_session_info", "session_id"); ok {
			child = c
		}
	}
	if child == "" {
		t.Fatal("Z1: no replayed launch call carries Zed's key")
	}
	send([]byte(`{"jsonrpc":"2.0","id":91,"method":"session/load","params":{"sessionId":"` + child + `","cwd":"/tmp","mcpServers":[]}}`))
	thread := until("91")
	if len(thread) < 3 {
		t.Fatalf("Z2: the child thread has %d frames, want the prompt, the linked frames and {}", len(thread))
	}
	for i, f := range thread[:len(thread)-1] {
		if s, _ := rawjson.LookupString(f, "params", "sessionId"); s != child {
			t.Errorf("Z2: child thread frame %d is on %q, not %s", i, s, child)
		}
	}
	if tag, _ := rawjson.LookupString(thread[0], "params", "update", "sessionUpdate"); tag != "user_message_chunk" {
		t.Errorf("Z2: the child thread starts with %s, not the prompt", tag)
	}
	if !bytes.HasSuffix(thread[len(thread)-1], []byte(`"result":{}}`)) {
		t.Errorf("Z2: the child's load answered %s", thread[len(thread)-1])
	}
	_ = stdin.Close()
	_, _ = io.Copy(io.Discard, stdout)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("proxy: %v (stderr: %s)", err, stderr.String())
	}
	for _, r := range readCaptureRecords(t, rec) {
		if r.From == "client" && bytes.Contains(r.Frame, []byte(`"id":91`)) {
			continue
		}
		if r.To == "agent" && bytes.Contains(r.Frame, []byte(child)) {
			t.Errorf("Z2: the child's id reached the agent: %s", r.Frame)
		}
	}
}

// TestZedOptionsUsage: --zed-subagents and --subagent-progress take
// auto, on or off; anything else is a usage error (exit 2, one line
// naming the choices), not a silent default.
func TestZedOptionsUsage(t *testing.T) {
	for _, arg := range []string{"--zed-subagents=yes", "--subagent-progress=true"} {
		cmd := exec.Command(proxyBinary, arg, "--", "true")
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 2 || !bytes.Contains(out, []byte("auto, on, off")) {
			t.Errorf("%s: err %v, output %q: want exit 2 naming auto, on, off", arg, err, out)
		}
	}
}

//go:build unix

package main

import (
	"bufio"
	"bytes"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
	"github.com/acp-normalize/acp-normalize/pipe"
)

// TestMockAgentZedReopen runs the real binary in front of `acp-normalize
// mock-agent` serving a bundled recording as it is (no load recorded in
// it), with a client named zed that does what Zed does when the user
// reopens a thread from history: initialize, session/load of the recorded
// session, then session/load of each child its replayed launch calls name
// in _meta.subagent_session_info (rules Z1-Z3). The mock replays the
// session (the user's prompt first), the proxy keys the launch calls, and
// each child's thread arrives, served by the proxy.
func TestMockAgentZedReopen(t *testing.T) {
	tests := []struct {
		name    string
		capture string
	}{
		{name: "qwen_foreground", capture: "qwen/foreground.jsonl"},
		{name: "claude_rig_foreground", capture: "claude/rig-foreground.jsonl"},
		{name: "qwen_subagents", capture: "qwen/subagents.jsonl"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join("..", "..", "testdata", "captures", filepath.FromSlash(tt.capture))
			sid := recordedSession(t, path)
			rec := filepath.Join(t.TempDir(), "session.jsonl")
			cmd := exec.Command(proxyBinary, "--record", rec, "--", proxyBinary, "mock-agent", "--no-stderr", path)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			stdin, stdout := startPiped(t, cmd)
			send := func(s string) {
				if _, err := io.WriteString(stdin, s+"\n"); err != nil {
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
			load := func(id int, session string) string {
				return `{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"session/load","params":{"sessionId":` +
					string(rawjson.Text(session)) + `,"cwd":"/tmp","mcpServers":[]}}`
			}

			send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":true,"writeTextFile":true},"terminal":true},"clientInfo":{"name":"zed","version":"0.220.0"}}}`)
			if init := until("0"); !bytes.Contains(init[len(init)-1], []byte(`"loadSession":true`)) {
				t.Fatalf("initialize answered %s, want loadSession: true", init[len(init)-1])
			}
			send(load(1, sid))
			parent := until("1")
			if !bytes.HasSuffix(parent[len(parent)-1], []byte(`"result":{}}`)) {
				t.Fatalf("the parent's load answered %s, want {}", parent[len(parent)-1])
			}
			var children []string
			prompt := false
			for _, f := range parent[:len(parent)-1] {
				if s, _ := rawjson.LookupString(f, "params", "sessionId"); s != sid {
					t.Errorf("a frame of the parent's replay is on %q, not %s: %s", s, sid, f)
				}
				if tag, _ := rawjson.LookupString(f, "params", "update", "sessionUpdate"); tag == "user_message_chunk" {
					prompt = true
				}
				if c, ok := rawjson.LookupString(f, "params", "update", "_meta", "subagent_session_info", "session_id"); ok && !slices.Contains(children, c) {
					children = append(children, c)
				}
			}
			if !prompt {
				t.Error("the parent's replay has no user_message_chunk: the recorded prompt was not replayed")
			}
			if len(children) == 0 {
				t.Fatal("Z1: no replayed launch call carries Zed's key")
			}
			t.Logf("%d children named in the replay of %s", len(children), sid)
			for i, child := range children {
				id := 2 + i
				send(load(id, child))
				thread := until(strconv.Itoa(id))
				if len(thread) < 3 {
					t.Fatalf("Z2: child %s has %d frames, want the prompt, the linked frames and {}", child, len(thread))
				}
				for j, f := range thread[:len(thread)-1] {
					if s, _ := rawjson.LookupString(f, "params", "sessionId"); s != child {
						t.Errorf("Z2: child thread frame %d is on %q, not %s", j, s, child)
					}
				}
				if tag, _ := rawjson.LookupString(thread[0], "params", "update", "sessionUpdate"); tag != "user_message_chunk" {
					t.Errorf("Z2: child %s starts with %s, not its prompt", child, tag)
				}
				if !bytes.HasSuffix(thread[len(thread)-1], []byte(`"result":{}}`)) {
					t.Errorf("Z2: the child's load answered %s", thread[len(thread)-1])
				}
			}
			_ = stdin.Close()
			_, _ = io.Copy(io.Discard, stdout)
			if err := cmd.Wait(); err != nil {
				t.Fatalf("proxy: %v (stderr: %s)", err, stderr.String())
			}
			for _, r := range readCaptureRecords(t, rec) {
				if r.To != "agent" {
					continue
				}
				for _, c := range children {
					if bytes.Contains(r.Frame, []byte(c)) {
						t.Errorf("Z2: the child's id reached the agent: %s", r.Frame)
					}
				}
			}
		})
	}
}

// recordedSession is the session id the capture's agent answered its
// first session/new with.
func recordedSession(t *testing.T, path string) string {
	t.Helper()
	for _, r := range readCaptureRecords(t, path) {
		if r.From == "agent" {
			if s, ok := rawjson.LookupString(r.Frame, "result", "sessionId"); ok {
				return s
			}
		}
	}
	t.Fatalf("%s: no session/new answer", path)
	return ""
}

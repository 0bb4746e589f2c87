//go:build unix

package main

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/route"
)

// liveClient drives a live proxy process and keeps every line it writes
// to stdout (what the client got).
type liveClient struct {
	t     *testing.T
	cmd   *exec.Cmd
	stdin io.WriteCloser
	mu    sync.Mutex
	cond  *sync.Cond
	lines []string
	eof   bool
	err   lockedBuffer
}

// startLive runs the real binary with args, as a client would.
func startLive(t *testing.T, env []string, args ...string) *liveClient {
	t.Helper()
	return startLiveCmd(t, exec.Command(proxyBinary, args...), env)
}

// startLiveCmd runs cmd (the binary, or what starts it) as a client would.
func startLiveCmd(t *testing.T, cmd *exec.Cmd, env []string) *liveClient {
	t.Helper()
	c := &liveClient{t: t, cmd: cmd}
	c.cond = sync.NewCond(&c.mu)
	c.cmd.Env = append(append(os.Environ(), "NO_COLOR=1"), env...)
	c.cmd.Stderr = &c.err
	var err error
	if c.stdin, err = c.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := c.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.cmd.Process.Kill() })
	go func() {
		r := bufio.NewReaderSize(stdout, 1<<20)
		for {
			l, err := r.ReadString('\n')
			c.mu.Lock()
			if l != "" {
				c.lines = append(c.lines, strings.TrimSuffix(l, "\n"))
			}
			if err != nil {
				c.eof = true
			}
			c.cond.Broadcast()
			c.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	return c
}

func (c *liveClient) send(frame []byte) {
	c.t.Helper()
	if _, err := c.stdin.Write(append(bytes.Clone(frame), '\n')); err != nil {
		c.t.Fatalf("writing to the proxy: %v", err)
	}
}

// waitFor waits until a line written to the client satisfies ok.
func (c *liveClient) waitFor(what string, ok func(env pipe.Envelope) bool) {
	c.t.Helper()
	c.waitForNth(what, 1, ok)
}

// waitForNth waits until n lines written to the client satisfy ok.
func (c *liveClient) waitForNth(what string, n int, ok func(env pipe.Envelope) bool) {
	c.t.Helper()
	timer := time.AfterFunc(20*time.Second, func() {
		c.mu.Lock()
		c.eof = true
		c.cond.Broadcast()
		c.mu.Unlock()
	})
	defer timer.Stop()
	c.mu.Lock()
	defer c.mu.Unlock()
	for seen, found := 0, 0; ; {
		for ; seen < len(c.lines); seen++ {
			if ok(pipe.Peek([]byte(c.lines[seen]))) {
				if found++; found == n {
					return
				}
			}
		}
		if c.eof {
			c.t.Fatalf("the client never got %s; stderr:\n%s", what, c.err.String())
		}
		c.cond.Wait()
	}
}

// finish closes the client's stream (unless the proxy already exited),
// waits for the proxy to exit and returns everything the client got.
func (c *liveClient) finish(closeStdin bool) []string {
	c.t.Helper()
	if closeStdin {
		_ = c.stdin.Close()
	}
	done := make(chan error, 1)
	go func() { done <- c.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		c.t.Fatalf("the proxy did not exit; stderr:\n%s", c.err.String())
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for !c.eof {
		c.cond.Wait()
	}
	return c.lines
}

// replayedToClient replays a recording with the real binary and returns
// the frames it says the client received.
func replayedToClient(t *testing.T, recording string) []string {
	t.Helper()
	return replayedToClientBy(t, proxyBinary, recording)
}

// replayedToClientBy is replayedToClient with another build of the binary.
func replayedToClientBy(t *testing.T, bin, recording string) []string {
	t.Helper()
	out, err := exec.Command(bin, "replay", recording).Output()
	if err != nil {
		t.Fatalf("replay %s: %v", recording, err)
	}
	var frames []string
	for _, l := range strings.Split(strings.TrimSuffix(string(out), "\n"), "\n") {
		const prefix = `{"to":"client","frame":`
		if rest, ok := strings.CutPrefix(l, prefix); ok {
			frames = append(frames, strings.TrimSuffix(rest, "}"))
		} else if !strings.HasPrefix(l, `{"to":"agent",`) && l != "" {
			t.Fatalf("unexpected replay line %s", l)
		}
	}
	return frames
}

// sameStream compares what the client got live with what the replay of
// the recording says it got, line by line.
func sameStream(t *testing.T, live, replayed []string, recording string) {
	t.Helper()
	if strings.Join(live, "\n") == strings.Join(replayed, "\n") {
		return
	}
	data, _ := os.ReadFile(recording)
	for i := 0; i < max(len(live), len(replayed)); i++ {
		var l, r string
		if i < len(live) {
			l = live[i]
		}
		if i < len(replayed) {
			r = replayed[i]
		}
		if l != r {
			t.Fatalf("client frame %d differs (%d live, %d replayed):\n  live %s\nreplay %s\nrecording:\n%s", i, len(live), len(replayed), l, r, data)
		}
	}
}

// sameOps compares what the live proxy did differently from plain
// forwarding (the output records of the recording, drops aside) with
// what the replay of the recording computes, in order: the frames the
// proxy replied, emitted, requested or replaced, toward either side.
func sameOps(t *testing.T, recording string) {
	t.Helper()
	f, err := os.Open(recording)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var recorded []string
	for rec, err := range pipe.NewCaptureReader(f).Records() {
		if err != nil {
			t.Fatalf("reading the recording: %v", err)
		}
		if rec.Op != "" && rec.Op != pipe.OpDrop {
			recorded = append(recorded, rec.Op+">"+rec.To.String()+" "+string(rec.Frame))
		}
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	var replayed []string
	err = route.ReplayWith(f, func(*route.Step) (route.RouterConfig, error) {
		return route.RouterConfig{Modules: allModules(), Version: version}, nil
	}, func(s *route.Step) error {
		for _, o := range s.Outs {
			if o.Op != "" {
				replayed = append(replayed, o.Op+">"+o.To.String()+" "+string(o.Frame))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(recorded, "\n") != strings.Join(replayed, "\n") {
		t.Errorf("the replay's changes differ from the live proxy's:\nlive:\n%s\nreplay:\n%s", strings.Join(recorded, "\n"), strings.Join(replayed, "\n"))
	}
}

// clientFrames returns the client's input frames of a capture, in order,
// without its answers to agent requests that the modules answer
// themselves (a real recording made without the proxy holds the client's
// answer to, say, Qwen's craft/drainMidTurnQueue, which never reaches an
// editor behind the proxy: V7).
func clientFrames(t *testing.T, capture string) [][]byte {
	t.Helper()
	f, err := os.Open(capture)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var frames [][]byte
	reached := map[string][]bool{} // agent request id -> reached the client, in order
	err = route.Replay(f, route.RouterConfig{Modules: allModules(), Version: version}, func(s *route.Step) error {
		if s.Kind != route.StepFrame || s.NonJSON {
			return nil
		}
		env := pipe.Peek(s.In)
		id := string(env.ID)
		switch {
		case s.From == pipe.Agent && env.Kind == pipe.Request:
			got := false
			for _, o := range s.Outs {
				e := pipe.Peek(o.Frame)
				got = got || (o.To == pipe.Client && e.Kind == pipe.Request && string(e.ID) == id)
			}
			reached[id] = append(reached[id], got)
		case s.From == pipe.Client && env.Kind == pipe.Response && len(reached[id]) > 0:
			got := reached[id][0]
			reached[id] = reached[id][1:]
			if !got {
				return nil
			}
			frames = append(frames, bytes.Clone(s.In))
		case s.From == pipe.Client:
			frames = append(frames, bytes.Clone(s.In))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return frames
}

// sameRequestID reports whether a live request id is the recorded one: the
// same bytes, or the proxy's own id with the live proxy's token
// ("acp-normalize:TOKEN:N" for a recorded "acp-normalize:N", rule C12).
func sameRequestID(live, recorded []byte) bool {
	n, ok := bytes.CutPrefix(recorded, []byte(`"acp-normalize:`))
	if !ok || bytes.Count(n, []byte(":")) > 0 {
		return bytes.Equal(live, recorded)
	}
	return bytes.HasPrefix(live, []byte(`"acp-normalize:`)) && bytes.HasSuffix(live, append([]byte(":"), n...))
}

// TestRoundTripRecordReplay pins rule R3 against the live proxy: for each
// bundled capture, a live session (the real binary with --record, the
// mock agent serving the capture, a client sending the recorded client
// frames) is recorded, and `replay` of that recording prints, byte for
// byte and in order, the frames the client got live, and that the
// changes it computes equal the recording's output records. The client
// behaves as an editor: it answers an agent's (or the proxy's) request
// once that request reached it, and makes a new request only once its
// earlier requests were answered.
func TestRoundTripRecordReplay(t *testing.T) {
	n := 0
	for _, capture := range captureFiles(t, "*/*.jsonl") {
		n++
		name := filepath.Base(filepath.Dir(capture)) + "/" + filepath.Base(capture)
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			rec := filepath.Join(t.TempDir(), "live.jsonl")
			c := startLive(t, nil, "--record", rec, "--record-raw", "--kill-grace", "10s", "--",
				proxyBinary, "mock-agent", "--no-stderr", capture)
			playClient(t, c, capture)
			live := c.finish(true)
			if len(live) < 2 {
				t.Fatalf("the client got %d frames; stderr:\n%s", len(live), c.err.String())
			}
			sameStream(t, live, replayedToClient(t, rec), rec)
			sameOps(t, rec)
		})
	}
	if n == 0 {
		t.Fatal("no bundled captures found")
	}
}

// playClient sends a capture's client frames to a live proxy as an editor
// would: it answers an agent's (or the proxy's) request once that request
// reached it, and makes a new request only once its earlier requests were
// answered; at the end every request has been answered.
func playClient(t *testing.T, c *liveClient, capture string) {
	t.Helper()
	var pending [][]byte      // ids of requests not yet known answered
	asked := map[string]int{} // id -> answers sent to requests with that id
	answered := func() {
		for _, id := range pending {
			c.waitFor("the answer to "+string(id), func(e pipe.Envelope) bool {
				return e.Kind == pipe.Response && bytes.Equal(e.ID, id)
			})
		}
		pending = nil
	}
	for _, frame := range clientFrames(t, capture) {
		env := pipe.Peek(frame)
		id := bytes.Clone(env.ID)
		switch env.Kind {
		case pipe.Response:
			asked[string(id)]++
			var liveID []byte
			c.waitForNth("request "+string(id), asked[string(id)], func(e pipe.Envelope) bool {
				if e.Kind == pipe.Request && sameRequestID(e.ID, id) {
					liveID = bytes.Clone(e.ID)
					return true
				}
				return false
			})
			// The live proxy's own ids carry its token (C12).
			frame = bytes.Replace(frame, id, liveID, 1)
		case pipe.Request:
			answered()
			pending = append(pending, id)
		}
		c.send(frame)
	}
	answered()
}

// TestRoundTripAgentExitsOrSignal is the round trip for the two other ends
// of a connection: the agent exits while the proxy holds Cursor's plan
// request for the client (F6: the client's prompt gets -32603), and the
// proxy is stopped by a signal while it holds one (C12).
func TestRoundTripAgentExitsOrSignal(t *testing.T) {
	tests := []struct {
		name   string
		signal bool
	}{
		{"agent_exits_first", false},
		{"signal", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			self, err := os.Executable()
			if err != nil {
				t.Fatal(err)
			}
			last := "exit 3"
			if tt.signal {
				last = "wait cancelled"
			}
			agentScript := script(t,
				"wait session/new",
				`out {"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"}}`,
				"wait session/prompt",
				`out {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"planning"}}}}`,
				`out {"jsonrpc":"2.0","id":0,"method":"cursor/create_plan","params":{"toolCallId":"plan-1","name":"Refactor","plan":"# Plan"}}`,
				last)
			rec := filepath.Join(t.TempDir(), "live.jsonl")
			c := startLive(t, []string{envFakeAgent + "=" + agentScript},
				"--record", rec, "--record-raw", "--kill-grace", "10s", "--", self, "-test.run=^$")
			c.send([]byte(`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}`))
			c.waitFor("the session", func(e pipe.Envelope) bool { return e.Kind == pipe.Response })
			c.send([]byte(`{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}`))
			c.waitFor("the plan's permission request", func(e pipe.Envelope) bool {
				return e.Kind == pipe.Request && string(e.Method) == "session/request_permission"
			})
			if tt.signal {
				if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil {
					t.Fatal(err)
				}
			}
			live := c.finish(false)
			data, _ := os.ReadFile(rec)
			if !bytes.Contains(data, []byte(`"event":"exit"`)) || tt.signal != bytes.Contains(data, []byte(`"event":"signal"`)) {
				t.Fatalf("recording lacks the expected events:\n%s", data)
			}
			if !tt.signal && !strings.Contains(strings.Join(live, "\n"), `"id":2,"error":{"code":-32603,"message":"agent exited"}`) {
				t.Errorf("the prompt got no -32603 live: %q", live)
			}
			sameStream(t, live, replayedToClient(t, rec), rec)
			sameOps(t, rec)
		})
	}
}

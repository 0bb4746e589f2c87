//go:build unix

package proxy

import (
	"github.com/acp-normalize/acp-normalize/route"

	"bytes"
	"io"
	"log/slog"
	"os"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/rewrite/rewritetest"
)

type slowWriter struct {
	mu  sync.Mutex
	buf bytes.Buffer
	per time.Duration // per KiB
}

func (w *slowWriter) Write(p []byte) (int, error) {
	time.Sleep(w.per * time.Duration(len(p)/1024+1))
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}
func (w *slowWriter) String() string { w.mu.Lock(); defer w.mu.Unlock(); return w.buf.String() }

type blockWriter struct{ ch chan struct{} }

func (w blockWriter) Write(p []byte) (int, error) { <-w.ch; return len(p), nil }

func runAsync(cfg Config) chan int {
	done := make(chan int, 1)
	go func() { code, _ := Run(cfg); done <- code }()
	return done
}

// F6: a slow but live client gets everything the agent wrote before it
// exited, though writing it takes longer than the grace.
func TestRunSlowClientGetsEverything(t *testing.T) {
	t.Parallel()
	stdinR, stdinW := io.Pipe()
	defer stdinW.Close()
	out := &slowWriter{per: 10 * time.Millisecond}
	agent := `seq 1 3000 | sed 's/.*/{"jsonrpc":"2.0","method":"n","params":{"i":&,"pad":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}}/'`
	done := runAsync(Config{Argv: []string{"sh", "-c", agent}, KillGrace: 300 * time.Millisecond,
		Stdin: stdinR, Stdout: out, Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	waitRun(t, done, 60*time.Second)
	if n := strings.Count(out.String(), "\n"); n != 3000 {
		t.Fatalf("client got %d of 3000 frames the agent wrote", n)
	}
}

// F6: the agent exits while the client, with a request open, never reads
// stdout: Run gives up delivering and returns.
func TestRunReturnsWhenClientNeverReads(t *testing.T) {
	t.Parallel()
	stdinR, stdinW := io.Pipe()
	defer stdinW.Close()
	go io.WriteString(stdinW, `{"jsonrpc":"2.0","id":1,"method":"session/prompt"}`+"\n")
	bw := blockWriter{make(chan struct{})}
	defer close(bw.ch)
	done := runAsync(Config{Argv: []string{"sh", "-c", `read l; echo '{"a":1}'; exit 3`}, KillGrace: 200 * time.Millisecond,
		Stdin: stdinR, Stdout: bw})
	waitRun(t, done, 8*time.Second) // the agent exited; KillGrace is 200ms
}

// F5/C12: a signal reaches the agent while the writer of replies to the
// agent is blocked because the agent does not read its stdin.
func TestRunSignalWithBlockedReplyWriter(t *testing.T) {
	t.Parallel()
	stdinR, stdinW := io.Pipe()
	defer stdinW.Close()
	out := newWatchWriter()
	sigs := make(chan os.Signal, 1)
	agent := `echo '{"jsonrpc":"2.0","id":"a1","method":"test/ask","params":{"question":"q"}}'
seq 1 4000 | sed 's/.*/{"jsonrpc":"2.0","id":&,"method":"test\/task","params":{"toolCallId":"t","description":"d"}}/'
echo '{"jsonrpc":"2.0","method":"marker/all-written"}'
sleep 30`
	done := runAsync(Config{Argv: []string{"sh", "-c", agent}, KillGrace: 300 * time.Millisecond,
		Router: route.RouterConfig{Modules: []rewrite.Module{rewritetest.Module()}},
		Stdin:  stdinR, Stdout: out, Signals: sigs})
	// The marker comes after the 4000 tasks: their 4000 replies (160 kB,
	// more than the agent's stdin pipe holds) are queued or being written.
	out.waitFor(t, "marker/all-written", 20*time.Second)
	sigs <- syscall.SIGTERM
	if code := waitRun(t, done, 20*time.Second); code != 128+15 {
		t.Fatalf("exit code %d, want 143 (the forwarded SIGTERM)", code)
	}
}

// F5: client EOF ends the session even while the client loop
// is blocked writing a frame larger than a pipe to an agent that never
// reads its stdin: the grace runs from the EOF, then the agent's stdin is
// closed (which frees the writer) and the agent gets SIGTERM.
func TestRunClientEOFWhileAgentDoesNotRead(t *testing.T) {
	t.Parallel()
	prompt := `{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"text":"` + strings.Repeat("x", 2<<20) + `"}}` + "\n"
	out := newWatchWriter()
	done := runAsync(Config{Argv: []string{"sh", "-c", "exec sleep 60"}, KillGrace: 200 * time.Millisecond,
		Stdin: strings.NewReader(prompt), Stdout: out})
	if code := waitRun(t, done, 20*time.Second); code != 128+15 {
		t.Fatalf("exit code %d, want 143 (SIGTERM after the grace)", code)
	}
	if want := `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"agent exited"}}` + "\n"; out.String() != want {
		t.Fatalf("client got %q, want %q", out.String(), want)
	}
}

// F5/P6: an agent that writes 20000 cursor/task-like requests
// before it reads its stdin is served: the replies queue up (bounded in
// bytes) while the agent's stdout keeps being read, and nothing stops.
func TestRunBurstOfRepliesToAnAgentNotReading(t *testing.T) {
	t.Parallel()
	stdinR, stdinW := io.Pipe()
	defer stdinW.Close()
	out := newWatchWriter()
	agent := `seq 1 20000 | sed 's/.*/{"jsonrpc":"2.0","id":&,"method":"test\/task","params":{"toolCallId":"t&","description":"d"}}/'
n=0; while [ $n -lt 20000 ] && read -r line; do n=$((n+1)); done
echo "{\"jsonrpc\":\"2.0\",\"method\":\"marker/replies-read\",\"params\":{\"n\":$n}}"`
	done := runAsync(Config{Argv: []string{"sh", "-c", agent}, KillGrace: 5 * time.Second,
		Router: route.RouterConfig{Modules: []rewrite.Module{rewritetest.Module()}},
		Stdin:  stdinR, Stdout: out})
	out.waitFor(t, `"marker/replies-read","params":{"n":20000}`, 60*time.Second)
	if code := waitRun(t, done, 20*time.Second); code != 0 {
		t.Fatalf("exit code %d", code)
	}
	if n := strings.Count(out.String(), `"sessionUpdate":"tool_call_update"`); n != 20000 {
		t.Fatalf("client got %d of 20000 updates", n)
	}
}

// waitRun waits for Run's exit code; a hang (past limit) fails the test
// with the proxy's goroutines.
func waitRun(t *testing.T, done <-chan int, limit time.Duration) int {
	t.Helper()
	select {
	case code := <-done:
		return code
	case <-time.After(limit):
		dump(t)
		t.Fatalf("Run did not return within %v", limit)
		return -1
	}
}

// watchWriter collects what the proxy writes to the client and lets a
// test wait for a marker in it.
type watchWriter struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	changed chan struct{} // closed and replaced on every write
}

func newWatchWriter() *watchWriter { return &watchWriter{changed: make(chan struct{})} }

func (w *watchWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	close(w.changed)
	w.changed = make(chan struct{})
	return w.buf.Write(p)
}

func (w *watchWriter) String() string { w.mu.Lock(); defer w.mu.Unlock(); return w.buf.String() }

// waitFor waits until the output contains marker; limit bounds a hang.
func (w *watchWriter) waitFor(t *testing.T, marker string, limit time.Duration) {
	t.Helper()
	timeout := time.After(limit)
	for {
		w.mu.Lock()
		found, changed := strings.Contains(w.buf.String(), marker), w.changed
		w.mu.Unlock()
		if found {
			return
		}
		select {
		case <-changed:
		case <-timeout:
			dump(t)
			t.Fatalf("no %q in the client's output within %v", marker, limit)
		}
	}
}

// dump logs the proxy's goroutines, to show where a hang is.
func dump(t *testing.T) {
	buf := make([]byte, 1<<20)
	n := runtime.Stack(buf, true)
	for _, g := range strings.Split(string(buf[:n]), "\n\n") {
		if strings.Contains(g, "proxy.") && !strings.Contains(g, "testing.tRunner") {
			var keep []string
			for _, l := range strings.Split(g, "\n") {
				if strings.Contains(l, "/proxy/") || strings.HasPrefix(l, "goroutine") || strings.Contains(l, "sync.") {
					keep = append(keep, strings.TrimSpace(l))
				}
			}
			t.Log(strings.Join(keep, " | "))
		}
	}
}

// F6: the client closed stdin and never reads stdout; the agent's last
// frame cannot be delivered: Run still returns.
func TestRunReturnsWithUndeliverableFrame(t *testing.T) {
	t.Parallel()
	bw := blockWriter{make(chan struct{})}
	defer close(bw.ch)
	agent := `printf '{"pad":"'; head -c 100000 /dev/zero | tr '\0' x; printf '"}\n'; exit 0`
	done := runAsync(Config{Argv: []string{"sh", "-c", agent}, KillGrace: 200 * time.Millisecond,
		Stdin: strings.NewReader(""), Stdout: bw})
	waitRun(t, done, 8*time.Second) // the agent exited; KillGrace is 200ms
}

// F6: a request the agent answered in its last frame is not reported as
// "agent exited", however long the delivery takes.
func TestRunAnsweredRequestNotReportedGone(t *testing.T) {
	t.Parallel()
	stdinR, stdinW := io.Pipe()
	defer stdinW.Close()
	go io.WriteString(stdinW, `{"jsonrpc":"2.0","id":77,"method":"session/prompt"}`+"\n")
	out := &slowWriter{per: 10 * time.Millisecond}
	agent := `read l; seq 1 3000 | sed 's/.*/{"jsonrpc":"2.0","method":"n","params":{"i":&,"pad":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}}/'; echo '{"jsonrpc":"2.0","id":77,"result":{"stopReason":"end_turn"}}'`
	done := runAsync(Config{Argv: []string{"sh", "-c", agent}, KillGrace: 300 * time.Millisecond,
		Stdin: stdinR, Stdout: out})
	waitRun(t, done, 60*time.Second)
	s := out.String()
	if strings.Contains(s, `"id":77,"error"`) || !strings.Contains(s, `"id":77,"result"`) || strings.Count(s, "\n") != 3001 {
		t.Fatalf("frames=%d result=%v agentExited=%v; want all 3001 frames and the result only",
			strings.Count(s, "\n"), strings.Contains(s, `"id":77,"result"`), strings.Contains(s, `"id":77,"error"`))
	}
}

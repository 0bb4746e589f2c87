//go:build unix

package proxy

import (
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
	stdinR, stdinW := io.Pipe()
	defer stdinW.Close()
	out := &slowWriter{per: 10 * time.Millisecond}
	agent := `seq 1 3000 | sed 's/.*/{"jsonrpc":"2.0","method":"n","params":{"i":&,"pad":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}}/'`
	done := runAsync(Config{Argv: []string{"sh", "-c", agent}, KillGrace: 300 * time.Millisecond,
		Stdin: stdinR, Stdout: out, Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("Run did not return")
	}
	if n := strings.Count(out.String(), "\n"); n != 3000 {
		t.Fatalf("client got %d of 3000 frames the agent wrote", n)
	}
}

// F6: the agent exits while the client, with a request open, never reads
// stdout: Run gives up delivering and returns.
func TestRunReturnsWhenClientNeverReads(t *testing.T) {
	stdinR, stdinW := io.Pipe()
	defer stdinW.Close()
	go io.WriteString(stdinW, `{"jsonrpc":"2.0","id":1,"method":"session/prompt"}`+"\n")
	bw := blockWriter{make(chan struct{})}
	defer close(bw.ch)
	done := runAsync(Config{Argv: []string{"sh", "-c", `read l; echo '{"a":1}'; exit 3`}, KillGrace: 200 * time.Millisecond,
		Stdin: stdinR, Stdout: bw})
	select {
	case <-done:
	case <-time.After(8 * time.Second):
		dump(t)
		t.Fatal("Run did not return 8s after the agent exited (KillGrace 200ms)")
	}
}

// F5/C12: a signal reaches the agent even when the queue of replies to the
// agent is full because the agent does not read its stdin.
func TestRunSignalWithFullReplyQueue(t *testing.T) {
	stdinR, stdinW := io.Pipe()
	defer stdinW.Close()
	var out slowWriter
	sigs := make(chan os.Signal, 1)
	agent := `echo '{"jsonrpc":"2.0","id":"a1","method":"test/ask","params":{"question":"q"}}'
seq 1 4000 | sed 's/.*/{"jsonrpc":"2.0","id":&,"method":"test\/task","params":{"toolCallId":"t","description":"d"}}/'
sleep 30`
	done := runAsync(Config{Argv: []string{"sh", "-c", agent}, KillGrace: 300 * time.Millisecond,
		Router: RouterConfig{Modules: []rewrite.Module{rewritetest.Module()}},
		Stdin:  stdinR, Stdout: &out, Signals: sigs})
	time.Sleep(2 * time.Second)
	sigs <- syscall.SIGTERM
	select {
	case code := <-done:
		if code != 128+15 {
			t.Fatalf("exit code %d, want 143 (the forwarded SIGTERM)", code)
		}
	case <-time.After(10 * time.Second):
		dump(t)
		t.Fatal("SIGTERM forwarded to proxy: Run did not return within 10s")
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
	bw := blockWriter{make(chan struct{})}
	defer close(bw.ch)
	agent := `printf '{"pad":"'; head -c 100000 /dev/zero | tr '\0' x; printf '"}\n'; exit 0`
	done := runAsync(Config{Argv: []string{"sh", "-c", agent}, KillGrace: 200 * time.Millisecond,
		Stdin: strings.NewReader(""), Stdout: bw})
	select {
	case <-done:
	case <-time.After(8 * time.Second):
		dump(t)
		t.Fatal("Run did not return 8s after the agent exited (KillGrace 200ms)")
	}
}

// F6: a request the agent answered in its last frame is not reported as
// "agent exited", however long the delivery takes.
func TestRunAnsweredRequestNotReportedGone(t *testing.T) {
	stdinR, stdinW := io.Pipe()
	defer stdinW.Close()
	go io.WriteString(stdinW, `{"jsonrpc":"2.0","id":77,"method":"session/prompt"}`+"\n")
	out := &slowWriter{per: 10 * time.Millisecond}
	agent := `read l; seq 1 3000 | sed 's/.*/{"jsonrpc":"2.0","method":"n","params":{"i":&,"pad":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}}/'; echo '{"jsonrpc":"2.0","id":77,"result":{"stopReason":"end_turn"}}'`
	done := runAsync(Config{Argv: []string{"sh", "-c", agent}, KillGrace: 300 * time.Millisecond,
		Stdin: stdinR, Stdout: out})
	<-done
	s := out.String()
	if strings.Contains(s, `"id":77,"error"`) || !strings.Contains(s, `"id":77,"result"`) || strings.Count(s, "\n") != 3001 {
		t.Fatalf("frames=%d result=%v agentExited=%v; want all 3001 frames and the result only",
			strings.Count(s, "\n"), strings.Contains(s, `"id":77,"result"`), strings.Contains(s, `"id":77,"error"`))
	}
}

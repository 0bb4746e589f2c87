//go:build unix

package proxy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/rewrite/rewritetest"
	"github.com/acp-normalize/acp-normalize/route"
)

// TestRun drives Run in-process with small shell agents; the end-to-end
// tests of cmd/acp-normalize cover the same rules through the binary.
func TestRun(t *testing.T) {
	tests := []struct {
		name   string
		agent  string // sh -c script
		stdin  string
		stdout string
		code   int
		// agentGot is what the agent must have received (it echoes its
		// stdin to stderr), when set.
		agentGot string
	}{
		{"P1 relay both ways", `read a; echo "$a"; read b; echo "$b"`, "{\"b\":1, \"a\":\"<&>\"}\n\n{\"x\":-1}\r\n", "{\"b\":1, \"a\":\"<&>\"}\n{\"x\":-1}\n", 0, ""},
		{"F6 pending request answered, exit code mirrored", `read line; echo '{"jsonrpc":"2.0","method":"bye"}'; exit 7`,
			`{"jsonrpc":"2.0","id":3,"method":"session/prompt"}` + "\n",
			`{"jsonrpc":"2.0","method":"bye"}` + "\n" + `{"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"agent exited"}}` + "\n", 7, ""},
		{"F2 non-JSON dropped", `echo 'Using worktree: /x'; echo '{"a":1}'`, "", `{"a":1}` + "\n", 0, ""},
		{"module reply goes back to the agent", `echo '{"jsonrpc":"2.0","id":9,"method":"test/task","params":{"toolCallId":"t","description":"d"}}'; read answer; echo "$answer" >&2`,
			"", `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess-1","update":{"sessionUpdate":"tool_call_update","toolCallId":"t","title":"Task: d"}}}` + "\n", 0,
			`"id":9,"result":{}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var stdout, stderr bytes.Buffer
			// The client stays connected until Run returns, so that the
			// agent's exit (F6), not the client's EOF (F5), ends the session.
			stdinR, stdinW := io.Pipe()
			defer stdinW.Close()
			go func() { _, _ = io.WriteString(stdinW, tt.stdin) }()
			var capture bytes.Buffer
			cw := pipe.NewCaptureWriter(&capture, false)
			code, err := Run(Config{
				Argv:        []string{"sh", "-c", tt.agent},
				Router:      route.RouterConfig{Modules: []rewrite.Module{rewritetest.Module()}, Version: "t", Capture: cw},
				KillGrace:   5 * time.Second,
				Stdin:       stdinR,
				Stdout:      &stdout,
				AgentStderr: &stderr,
				Logger:      slog.New(slog.NewTextHandler(io.Discard, nil)),
			})
			if err != nil {
				t.Fatal(err)
			}
			// Run only queues the capture's records: its owner closes it.
			if err := cw.Close(); err != nil {
				t.Fatal(err)
			}
			if code != tt.code || stdout.String() != tt.stdout {
				t.Fatalf("exit %d, stdout:\n%s\nwant exit %d, stdout:\n%s\nstderr: %s", code, stdout.String(), tt.code, tt.stdout, stderr.String())
			}
			if !strings.Contains(stderr.String(), tt.agentGot) {
				t.Fatalf("the agent did not get the reply; its stderr: %q", stderr.String())
			}
			for _, want := range []string{`"event":"start"`, `"event":"exit"`} {
				if !strings.Contains(capture.String(), want) {
					t.Fatalf("capture lacks %s", want)
				}
			}
		})
	}
}

func TestRunStartFailure(t *testing.T) {
	_, err := Run(Config{Argv: []string{"/no/such/agent"}, Stdin: strings.NewReader(""), Stdout: io.Discard})
	var se *StartError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), `cannot run agent "/no/such/agent"`) {
		t.Fatalf("err = %v, want a *StartError", err)
	}

}

// maxWriteRecorder records the largest single write it gets.
type maxWriteRecorder struct {
	mu         sync.Mutex
	max, total int
	newlines   int
}

func (w *maxWriteRecorder) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.max = max(w.max, len(p))
	w.total += len(p)
	w.newlines += bytes.Count(p, []byte("\n"))
	return len(p), nil
}

// P6, F4: an agent that writes to stderr without ever ending the line (a
// progress display redrawn with \r, say) does not make the proxy hold it
// all: a line is passed on in pieces of at most maxStderrLine bytes.
func TestRunStderrLineBounded(t *testing.T) {
	t.Parallel()
	const n = 3 << 20
	var stderr maxWriteRecorder
	code, err := Run(Config{
		Argv:        []string{"sh", "-c", fmt.Sprintf(`head -c %d /dev/zero | tr '\0' x >&2`, n)},
		KillGrace:   5 * time.Second,
		Stdin:       strings.NewReader(""),
		Stdout:      io.Discard,
		AgentStderr: &stderr,
	})
	if err != nil || code != 0 {
		t.Fatalf("Run = %d, %v", code, err)
	}
	stderr.mu.Lock()
	defer stderr.mu.Unlock()
	if stderr.max > maxStderrLine+1 {
		t.Errorf("a stderr write of %d bytes: the line was held whole (cap %d)", stderr.max, maxStderrLine)
	}
	if got := stderr.total - stderr.newlines; got != n {
		t.Errorf("%d bytes of stderr passed on, want %d", got, n)
	}
}

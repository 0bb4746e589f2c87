//go:build unix

package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestE2EF4StderrNobodyReads: an editor that never drains the proxy's
// stderr (some do not) must not stall the session (F4). The
// proxy's stderr here is a pipe whose read end the test holds open and
// never reads; the agent writes 8 MiB to its stderr, far more than any
// pipe buffer, before it answers. The session completes, the log file has
// every stderr line, and it says how many lines stderr did not get.
func TestE2EF4StderrNobodyReads(t *testing.T) {
	const lines = 80_000 // 100 bytes each
	logFile := filepath.Join(t.TempDir(), "proxy.log")
	cmd := exec.Command(proxyBinary, append([]string{"--kill-grace", "30s", "--log-file", logFile, "--"}, fakeAgentArgv(t)...)...)
	cmd.Env = append(os.Environ(), envFakeAgent+"="+script(t, "errflood 80000", "echo"), "NO_COLOR=1")
	stderrR, stderrW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stderrR.Close() // held open and never read: writes to it block once it is full
	cmd.Stderr = stderrW  // an *os.File: the proxy gets the pipe itself
	stdin, stdout := startPiped(t, cmd)
	stderrW.Close()
	s := &proxySession{t: t, cmd: cmd, stdin: stdin, stdout: bufio.NewReader(stdout), stderr: &bytes.Buffer{}, done: make(chan struct{})}
	t.Cleanup(func() {
		select {
		case <-s.done:
		default:
			_ = cmd.Process.Kill()
		}
	})

	// A stalled session is the failure: end it so the reads below return.
	hang := time.AfterFunc(90*time.Second, func() { _ = cmd.Process.Kill() })
	defer hang.Stop()

	frame := `{"jsonrpc":"2.0","method":"_ping","params":{}}`
	s.send(frame)
	if got := s.readLine(); got != frame {
		t.Fatalf("echo = %q", got)
	}
	s.stdin.Close()
	if rest := s.readAll(); rest != "" {
		t.Fatalf("unexpected output %q", rest)
	}
	if code := s.wait(60 * time.Second); code != 0 {
		t.Fatalf("exit %d", code)
	}
	logged, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(logged, []byte("stderr flood line ")); n != lines {
		t.Errorf("log file has %d of the agent's %d stderr lines", n, lines)
	}
	if !strings.Contains(string(logged), "stderr was not being read") {
		t.Errorf("log file does not say stderr lines were dropped:\n%s", tail(logged, 2000))
	}
}

// tail returns the last n bytes of b.
func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

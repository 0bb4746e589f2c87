//go:build linux

package main

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestE2ENoProcessOutlivesTheProxy pins F5 on Linux: whatever ends the
// proxy, no process of the agent's tree survives it, including a
// grandchild in its own process group and a setsid daemon whose parent
// exited, and also behind a second proxy (acp-normalize -- acp-normalize
// -- agent). Every process below the proxy, subreapers included, must be
// gone afterwards.
func TestE2ENoProcessOutlivesTheProxy(t *testing.T) {
	signal := func(sig syscall.Signal) func(*proxySession) {
		return func(s *proxySession) {
			if err := s.cmd.Process.Signal(sig); err != nil {
				s.t.Fatal(err)
			}
		}
	}
	clientEOF := func(s *proxySession) { s.stdin.Close() }
	tests := []struct {
		name   string
		nested bool
		end    func(*proxySession)
		code   int
	}{
		{"F5 client EOF", false, clientEOF, 0},
		{"F5 SIGTERM", false, signal(syscall.SIGTERM), 128 + 15},
		{"F5 SIGINT", false, signal(syscall.SIGINT), 128 + 2},
		{"F5 SIGHUP", false, signal(syscall.SIGHUP), 128 + 1},
		{"F5 SIGQUIT", false, signal(syscall.SIGQUIT), 2}, // the Go runtime's dump-and-exit
		{"F5 SIGKILL", false, signal(syscall.SIGKILL), 128 + 9},
		{"F5 nested, client EOF", true, clientEOF, 0},
		{"F5 nested, SIGKILL of the outer proxy", true, signal(syscall.SIGKILL), 128 + 9},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			pidfile := filepath.Join(t.TempDir(), "pids")
			agent := script(t, "spawn-tree "+pidfile, "echo", "exit 0")
			args := []string{"--kill-grace", "5s", "--"}
			if tt.nested {
				args = append(args, proxyBinary, "--kill-grace", "5s", "--")
			}
			s := startArgs(t, agent, append(args, fakeAgentArgv(t)...))
			pids := readPids(t, pidfile)
			if len(pids) != 3 {
				t.Fatalf("pids %v, want agent, grandchild and daemon", pids)
			}
			tree := descendantsOf(s.cmd.Process.Pid) // includes pids, unless one already exited
			for _, p := range pids {
				if !slices.Contains(tree, p) {
					tree = append(tree, p)
				}
			}
			tt.end(s)
			if code := s.wait(30 * time.Second); code != tt.code {
				t.Errorf("exit code %d, want %d; stderr:\n%s", code, tt.code, s.stderr.String())
			}
			waitGone(t, tree)
		})
	}
}

// TestE2EClientEOFWithAWriteToTheAgentBlocked pins F5 (issue 8.2) on the
// binary: the client sends a 2 MiB prompt to an agent that never reads
// its stdin and closes its stream; the session still ends (SIGTERM after
// the grace) and the prompt is answered -32603.
func TestE2EClientEOFWithAWriteToTheAgentBlocked(t *testing.T) {
	t.Parallel()
	s := start(t, script(t, "sleep 60s"), []string{"--kill-grace", "300ms"})
	s.send(`{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"text":"` + strings.Repeat("x", 2<<20) + `"}}`)
	s.stdin.Close()
	if got, want := s.readAll(), `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"agent exited"}}`+"\n"; got != want {
		t.Fatalf("client got %q, want %q", got, want)
	}
	if code := s.wait(30 * time.Second); code != 128+15 {
		t.Fatalf("exit code %d, want 143; stderr:\n%s", code, s.stderr.String())
	}
}

// descendantsOf lists the processes below pid, from /proc.
func descendantsOf(root int) []int {
	entries, _ := os.ReadDir("/proc")
	children := map[int][]int{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(f) > 1 {
			ppid, _ := strconv.Atoi(f[1])
			children[ppid] = append(children[ppid], pid)
		}
	}
	var out []int
	for queue := []int{root}; len(queue) > 0; queue = queue[1:] {
		for _, c := range children[queue[0]] {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}

// TestE2ESubreaperKilled pins F5 when the subreaper itself is SIGKILLed
// (the OOM killer, or `pkill -9 acp-normalize`, whose name it shares):
// the agent dies of its parent-death signal, and the proxy then ends what
// is left of the agent's process group itself (a child holding the
// agent's stdout here) instead of leaving it running. It exits 128+9, the
// subreaper's status.
func TestE2ESubreaperKilled(t *testing.T) {
	t.Parallel()
	pidfile := filepath.Join(t.TempDir(), "pids")
	s := start(t, script(t, "spawn-holding "+pidfile, "echo"), []string{"--kill-grace", "5s"})
	pids := readPids(t, pidfile)
	if len(pids) != 2 {
		t.Fatalf("pids %v, want agent and child", pids)
	}
	subreaper := parentPid(t, pids[0])
	if subreaper == s.cmd.Process.Pid {
		t.Fatalf("the agent %d is the proxy's child: no subreaper in between", pids[0])
	}
	if err := syscall.Kill(subreaper, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if code := s.wait(30 * time.Second); code != 128+9 {
		t.Errorf("exit code %d, want 137; stderr:\n%s", code, s.stderr.String())
	}
	waitGone(t, pids)
}

// parentPid reads a process's parent pid from /proc.
func parentPid(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	ppid, err := strconv.Atoi(f[1])
	if err != nil {
		t.Fatal(err)
	}
	return ppid
}

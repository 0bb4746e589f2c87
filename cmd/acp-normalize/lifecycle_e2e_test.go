//go:build linux

package main

import (
	"os"
	"os/exec"
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

// TestE2EClientEOFWithAWriteToTheAgentBlocked pins F5 on the
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

// TestE2EUnkillableDescendant pins F5 when the agent's tree holds a
// process the proxy's user cannot signal: a child that a setuid program
// turned into another user's (as `sudo CMD` does). The subreaper cannot
// end it; once only such processes are left it gives up on them instead
// of waiting forever, and the proxy exits after client EOF with the
// agent's status. It needs root (to make the setuid copy of setpriv and
// to run the proxy as nobody).
func TestE2EUnkillableDescendant(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: a setuid-root helper and a proxy run as another user")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("needs setpriv")
	}
	t.Parallel()
	dir := t.TempDir()
	for d := dir; d != os.TempDir() && d != "/"; d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	copyFile(t, setpriv, filepath.Join(dir, "setpriv"), 0o755|os.ModeSetuid)
	proxyCopy := filepath.Join(dir, "acp-normalize")
	copyFile(t, proxyBinary, proxyCopy, 0o755)
	pidfile := filepath.Join(dir, "pid")
	if err := os.WriteFile(pidfile, nil, 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(pidfile, 0o666); err != nil {
		t.Fatal(err)
	}
	agent := filepath.Join(dir, "agent.sh")
	body := "#!/bin/sh\n" + filepath.Join(dir, "setpriv") + " --reuid=0 --regid=0 --clear-groups sleep 300 </dev/null >/dev/null 2>&1 &\n" +
		"echo $! > " + pidfile + "\nexec sleep 300\n"
	if err := os.WriteFile(agent, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	// A grace long enough that a loaded machine still delivers SIGTERM to
	// the agent before SIGKILL is due (the exit code is the subject).
	cmd := exec.Command(proxyCopy, "--kill-grace", "2s", "--", agent)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pids := readPids(t, pidfile)
	t.Cleanup(func() { _ = syscall.Kill(pids[0], syscall.SIGKILL) })
	waitOwner(t, pids[0], 0) // setpriv has made it root's
	stdin.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("the proxy did not exit after client EOF; stderr:\n%s", stderr.String())
	}
	if code := cmd.ProcessState.ExitCode(); code != 128+15 {
		t.Errorf("exit code %d, want 143; stderr:\n%s", code, stderr.String())
	}
}

func copyFile(t *testing.T, from, to string, mode os.FileMode) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(to, mode); err != nil {
		t.Fatal(err)
	}
}

// waitOwner waits until pid's real uid is uid (a setuid program switched
// to it), or skips when the file system ignores setuid bits.
func waitOwner(t *testing.T, pid, uid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
		if err != nil {
			t.Skipf("the setuid helper did not run: %v", err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) > 1 && f[0] == "Uid:" && f[1] == strconv.Itoa(uid) {
				if strings.Contains(string(b), "Name:\tsleep") {
					return
				}
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Skip("the setuid helper did not make its child root's (nosuid file system?)")
}

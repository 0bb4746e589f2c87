//go:build linux

package proxy

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// spawner starts the agent behind the subreaper (see SubreaperMain):
// the proxy's own binary, re-executed, in its own process group, with a
// parent-death signal and the two pipes it talks to the proxy over.
type spawner struct {
	argv []string
	// control: the proxy writes commands, the subreaper reads; status:
	// the subreaper writes its one status line.
	controlR, controlW *os.File
	statusR, statusW   *os.File
}

func newSpawner(argv []string) (*spawner, error) {
	cr, cw, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("subreaper control pipe: %w", err)
	}
	sr, sw, err := os.Pipe()
	if err != nil {
		closeAll(cr, cw)
		return nil, fmt.Errorf("subreaper status pipe: %w", err)
	}
	return &spawner{argv: argv, controlR: cr, controlW: cw, statusR: sr, statusW: sw}, nil
}

func (l *spawner) command(grace time.Duration) *exec.Cmd {
	env := make([]string, 0, len(os.Environ())+1)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, envSubreaper+"=") {
			env = append(env, kv)
		}
	}
	env = append(env, fmt.Sprintf("%s=%d %d", envSubreaper, os.Getpid(), int64(grace)))
	return &exec.Cmd{
		Path:       "/proc/self/exe",
		Args:       append([]string{subreaperArgv0}, l.argv...),
		Env:        env,
		ExtraFiles: []*os.File{l.controlR, l.statusW}, // fds 3 and 4
		SysProcAttr: &syscall.SysProcAttr{
			Setpgid:   true,
			Pdeathsig: parentDeathSignal,
		},
	}
}

// abort releases the pipes when the subreaper could not be started.
func (l *spawner) abort() { closeAll(l.controlR, l.controlW, l.statusR, l.statusW) }

// started reads the subreaper's status line: the agent's pid, or why the
// agent could not be run (then the subreaper has exited).
func (l *spawner) started(cmd *exec.Cmd) (processGroup, int, error) {
	closeAll(l.controlR, l.statusW) // the subreaper has its own copies
	line, err := bufio.NewReader(l.statusR).ReadString('\n')
	_ = l.statusR.Close()
	line = strings.TrimSuffix(line, "\n")
	if pid, ok := strings.CutPrefix(line, "started "); ok {
		if n, err := strconv.Atoi(pid); err == nil {
			return processGroup{control: &controlPipe{w: l.controlW}, pgid: n}, n, nil
		}
	}
	_ = l.controlW.Close()
	_ = cmd.Wait()
	msg, ok := strings.CutPrefix(line, "error ")
	switch {
	case ok:
		err = errors.New(msg)
	case err == nil || errors.Is(err, io.EOF):
		err = fmt.Errorf("the subreaper exited without starting it (%v)", cmd.ProcessState)
	}
	return processGroup{}, 0, err
}

// controlPipe is the proxy's end of the subreaper's command pipe.
type controlPipe struct {
	mu sync.Mutex
	w  *os.File
}

// send writes cmd to the subreaper. gone reports that the subreaper has
// exited (only it holds the pipe's read end): normally it ended every
// descendant first, but if it was killed (SIGKILL, the OOM killer) what
// it left is the caller's to end.
func (c *controlPipe) send(cmd string) (gone bool, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, err = io.WriteString(c.w, cmd+"\n")
	if errors.Is(err, syscall.EPIPE) || errors.Is(err, os.ErrClosed) {
		return true, nil
	}
	return false, err
}

// processGroup is the agent's whole process tree, as the subreaper sees
// it: signals go to the agent's group through the subreaper, and kill ends
// every descendant. If the subreaper was killed, its parent-death signal
// killed the agent, and signals go to the agent's process group directly:
// that still ends the processes that stayed in it (those that left it are
// beyond reach then).
type processGroup struct {
	control *controlPipe
	pgid    int // the agent's pid
}

func (g processGroup) signal(sig os.Signal) error {
	s, ok := sig.(syscall.Signal)
	if !ok {
		return errors.New("not a Unix signal")
	}
	return g.send("signal "+strconv.Itoa(int(s)), s)
}

// send sends cmd to the subreaper, or sig to the agent's group when the
// subreaper is gone.
func (g processGroup) send(cmd string, sig syscall.Signal) error {
	gone, err := g.control.send(cmd)
	if !gone {
		return err
	}
	if err := syscall.Kill(-g.pgid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	return nil
}

// alive is asked once the proxy has seen the subreaper exit. After a
// normal exit the subreaper has ended every descendant, and the agent's
// group is empty; after the subreaper was killed, processes may be left
// in it. Processes this user may not signal (EPERM) do not count: the
// subreaper gave up on those already.
func (g processGroup) alive() bool { return syscall.Kill(-g.pgid, 0) == nil }

func (g processGroup) terminate() error { return g.signal(syscall.SIGTERM) }

// kill ends the agent and every descendant at once (SIGKILL).
func (g processGroup) kill() error { return g.send("kill", syscall.SIGKILL) }

// release closes the command pipe: a subreaper still running then ends
// every descendant.
func (g processGroup) release() {
	g.control.mu.Lock()
	defer g.control.mu.Unlock()
	_ = g.control.w.Close()
}

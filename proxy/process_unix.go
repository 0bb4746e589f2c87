//go:build unix

package proxy

import (
	"errors"
	"os"
	"os/signal"
	"syscall"
)

// processGroup signals the agent's process group: the agent was started as
// its group's leader, so the group id is its pid.
type processGroup struct{ pgid int }

func newProcessGroup(p *os.Process) processGroup { return processGroup{pgid: p.Pid} }

// signal sends sig to every process of the group.
func (g processGroup) signal(sig os.Signal) error {
	s, ok := sig.(syscall.Signal)
	if !ok {
		return errors.New("not a Unix signal")
	}
	err := syscall.Kill(-g.pgid, s)
	if errors.Is(err, syscall.ESRCH) {
		return nil // nobody left
	}
	return err
}

// alive reports whether any process of the group is left.
func (g processGroup) alive() bool {
	err := syscall.Kill(-g.pgid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// terminate asks the group to exit (SIGTERM).
func (g processGroup) terminate() error { return g.signal(syscall.SIGTERM) }

// kill ends the group (SIGKILL).
func (g processGroup) kill() error { return g.signal(syscall.SIGKILL) }

// release frees what the group holds (nothing on Unix).
func (g processGroup) release() {}

func exitCode(ps *os.ProcessState) int {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

// ForwardedSignals returns the signals the proxy forwards to the agent's
// group (rule F5).
func ForwardedSignals() []os.Signal {
	return []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP}
}

// catchSIGPIPE makes a write to a closed stdout return EPIPE instead of
// killing the proxy, so that a vanished client is handled like client EOF
// (the agent is then ended, not orphaned). It returns the undo.
func catchSIGPIPE() func() {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGPIPE)
	return func() { signal.Stop(ch) }
}

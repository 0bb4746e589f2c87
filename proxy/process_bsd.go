//go:build unix && !linux

package proxy

import (
	"errors"
	"os"
	"syscall"
)

// sysProcAttr puts the agent in its own process group. These systems have
// neither a parent-death signal nor a subreaper: an agent outlives a proxy
// killed by SIGKILL, and so do processes that left the agent's group (any
// other exit of the proxy ends the group).
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

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

// release frees what the group holds (nothing here).
func (g processGroup) release() {}

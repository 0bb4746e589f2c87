//go:build !linux

package proxy

import (
	"os/exec"
	"time"
)

// launcher starts the agent itself, in its own process group (Unix) or
// job object (Windows); these systems have no subreaper.
type launcher struct{ argv []string }

func newLauncher(argv []string) (*launcher, error) { return &launcher{argv: argv}, nil }

func (l *launcher) command(time.Duration) *exec.Cmd {
	cmd := exec.Command(l.argv[0], l.argv[1:]...)
	cmd.SysProcAttr = sysProcAttr()
	return cmd
}

func (l *launcher) abort() {}

func (l *launcher) started(cmd *exec.Cmd) (processGroup, int, error) {
	return newProcessGroup(cmd.Process), cmd.Process.Pid, nil
}

// SubreaperMain reports false: only Linux has the subreaper.
func SubreaperMain() (int, bool) { return 0, false }

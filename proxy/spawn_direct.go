//go:build !linux

package proxy

import (
	"os/exec"
	"time"
)

// spawner starts the agent itself, in its own process group (Unix) or
// job object (Windows); these systems have no subreaper.
type spawner struct{ argv []string }

func newSpawner(argv []string) (*spawner, error) { return &spawner{argv: argv}, nil }

func (l *spawner) command(time.Duration) *exec.Cmd {
	cmd := exec.Command(l.argv[0], l.argv[1:]...)
	cmd.SysProcAttr = sysProcAttr()
	return cmd
}

func (l *spawner) abort() {}

func (l *spawner) started(cmd *exec.Cmd) (processGroup, int, error) {
	return newProcessGroup(cmd.Process), cmd.Process.Pid, nil
}

// SubreaperMain reports false: only Linux has the subreaper.
func SubreaperMain() (int, bool) { return 0, false }

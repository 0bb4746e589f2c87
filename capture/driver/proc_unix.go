//go:build unix

package driver

import (
	"os"
	"os/exec"
	"syscall"
)

// ownGroup starts the agent in its own process group, so that ending it
// ends whatever it started too.
func ownGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// signalGroup sends sig to the agent's process group.
func signalGroup(p *os.Process, sig syscall.Signal) { _ = syscall.Kill(-p.Pid, sig) }

func terminate(p *os.Process) { signalGroup(p, syscall.SIGTERM) }
func kill(p *os.Process)      { signalGroup(p, syscall.SIGKILL) }

// exitCode is the agent's exit code, 128+N when signal N ended it.
func exitCode(st *os.ProcessState) int {
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return st.ExitCode()
}

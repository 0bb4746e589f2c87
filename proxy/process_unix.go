//go:build unix

package proxy

import (
	"os"
	"os/signal"
	"syscall"
)

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

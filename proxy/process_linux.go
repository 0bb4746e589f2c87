//go:build linux

package proxy

import "syscall"

// sysProcAttr puts the agent in its own process group and asks the kernel
// to SIGKILL it if the proxy dies (even by SIGKILL), so it never outlives
// the proxy (rule F5).
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

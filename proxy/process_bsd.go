//go:build unix && !linux

package proxy

import "syscall"

// sysProcAttr puts the agent in its own process group. These systems have
// no parent-death signal: an agent outlives a proxy killed by SIGKILL
// (any other exit of the proxy ends the group).
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

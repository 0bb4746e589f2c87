//go:build unix

package main

import (
	"io"
	"os"
	"strconv"
	"syscall"
)

// envLauncherFD names the descriptor the npm launcher holds the other end
// of (internal/release/npm/launcher.js).
const envLauncherFD = "ACP_NORMALIZE_LAUNCHER_FD"

// watchLauncher ends this process as on SIGTERM when the npm launcher
// that started it dies, by whatever means: the launcher passes one end of
// a socket whose other end only it holds, so the socket reads EOF when
// the launcher is gone, SIGKILL included. (The editor killed the launcher,
// not us: without this the agent would run on while the editor's pipes
// stay open.) SIGTERM is the proxy's normal path: the agent's group gets
// it, then SIGKILL after the grace, and the subreaper ends every
// descendant (F5). A parent-death signal would need the thread that
// created us, and macOS has none; the socket works the same everywhere.
//
// The variable is removed from the environment at once: the agent, or a
// nested acp-normalize, must never watch a descriptor 3 of its own.
func watchLauncher() {
	v, ok := os.LookupEnv(envLauncherFD)
	if !ok {
		return
	}
	_ = os.Unsetenv(envLauncherFD)
	fd, err := strconv.Atoi(v)
	if err != nil || fd < 3 {
		return
	}
	var st syscall.Stat_t
	if syscall.Fstat(fd, &st) != nil {
		return // no such descriptor: set by hand, not by the launcher
	}
	if kind := st.Mode & syscall.S_IFMT; kind != syscall.S_IFSOCK && kind != syscall.S_IFIFO {
		return
	}
	syscall.CloseOnExec(fd) // not the agent's
	f := os.NewFile(uintptr(fd), "npm launcher")
	go func() {
		_, _ = io.Copy(io.Discard, f) // returns when the launcher is gone
		_ = syscall.Kill(os.Getpid(), syscall.SIGTERM)
	}()
}

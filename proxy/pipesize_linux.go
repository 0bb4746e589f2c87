//go:build linux

package proxy

import (
	"os"

	"golang.org/x/sys/unix"
)

// agentPipeSize is the capacity asked for the pipe the agent writes its
// stdout to: a streaming agent runs ahead by this much, and the proxy
// takes it in few reads (the default is 64 KiB). Best effort: past
// /proc/sys/fs/pipe-max-size or the user's pipe quota the default stays.
const agentPipeSize = 1 << 20

func growPipe(f *os.File) {
	if raw, err := f.SyscallConn(); err == nil {
		_ = raw.Control(func(fd uintptr) {
			_, _ = unix.FcntlInt(fd, unix.F_SETPIPE_SZ, agentPipeSize)
		})
	}
}

//go:build unix

package main

import (
	"os"
	"syscall"
)

// openNoFollow opens path for writing without following a symbolic link
// in its last element: O_NOFOLLOW makes the open itself fail, so there is
// no window between a check and the open.
func openNoFollow(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
}

//go:build !unix

package main

import (
	"fmt"
	"os"
)

// openRecordFile opens path for writing after checking with Lstat that it
// is not a symbolic link. Without O_NOFOLLOW (Windows) a link created
// between the check and the open is still followed. There are no FIFOs to
// wait for: later is always nil.
func openRecordFile(path string) (*os.File, func() (*os.File, error), error) {
	if st, err := os.Lstat(path); err == nil && st.Mode()&os.ModeSymlink != 0 {
		return nil, nil, fmt.Errorf("%s %w", path, errRecordSymlink)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	return f, nil, err
}

// openAppendNow opens path for appending; later is always nil.
func openAppendNow(path string) (*os.File, func() (*os.File, error), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	return f, nil, err
}

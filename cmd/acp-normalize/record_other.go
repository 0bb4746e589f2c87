//go:build !unix

package main

import (
	"fmt"
	"os"
)

// openNoFollow opens path for writing after checking with Lstat that it is
// not a symbolic link. Without O_NOFOLLOW (Windows) a link created between
// the check and the open is still followed.
func openNoFollow(path string) (*os.File, error) {
	if st, err := os.Lstat(path); err == nil && st.Mode()&os.ModeSymlink != 0 {
		return nil, fmt.Errorf("%s %w", path, errRecordSymlink)
	}
	return os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
}

package main

import (
	"errors"
	"fmt"
	"log/slog"
	"os"

	"github.com/acp-normalize/acp-normalize/pipe"
)

// errRecordSymlink is the refusal of a --record path that is a symbolic
// link: following it would truncate (or create) whatever it points to.
var errRecordSymlink = errors.New("is a symbolic link: refusing to follow it")

// openRecord opens the --record file (R1): created or truncated, mode
// 0600 even when it existed with a wider mode, never through a symbolic
// link (errRecordSymlink; see openNoFollow for each OS).
func openRecord(path string) (*os.File, error) {
	f, err := openNoFollow(path)
	if err != nil {
		if st, lerr := os.Lstat(path); lerr == nil && st.Mode()&os.ModeSymlink != 0 {
			return nil, fmt.Errorf("%s %w", path, errRecordSymlink)
		}
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	// A file that existed keeps its mode on open: make it private (R1).
	// Not a pipe or a device (--record /dev/stderr): that mode is not the
	// capture's to change.
	if st.Mode().IsRegular() {
		if err := f.Chmod(0o600); err != nil {
			f.Close()
			return nil, fmt.Errorf("making %s private: %w", path, err)
		}
	}
	return f, nil
}

// reportDropped logs, at error, how many records the capture left out
// because it could not keep up (a "dropped" event marks each gap in the
// file): the capture is not the whole session.
func reportDropped(log *slog.Logger, path string, capture *pipe.CaptureWriter) {
	if n := capture.Dropped(); n > 0 {
		log.Error("--record: records were left out of the capture (it could not keep up); a \"dropped\" event marks each gap",
			"file", path, "dropped", n)
	}
}

//go:build unix

package main

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// openRecordFile opens path for writing without waiting and without
// following a symbolic link in its last element: O_NOFOLLOW makes the
// open itself fail, so there is no window between a check and the open.
// O_NONBLOCK keeps the open from waiting: a FIFO with no reader fails it
// with ENXIO, and is returned as later, a blocking open for the capture's
// goroutine to make.
//
// A symbolic link is followed only to a FIFO or a character device
// (/dev/stderr, a link to /proc/self/fd/2): opening one neither creates
// nor truncates a file, which is what refusing links guards against. It
// is opened without O_CREATE and O_TRUNC and its type checked on the open
// file, so a link changed in between is refused, never followed to a
// regular file.
func openRecordFile(path string) (f *os.File, later func() (*os.File, error), err error) {
	const flags = os.O_WRONLY | syscall.O_CLOEXEC
	f, err = os.OpenFile(path, flags|os.O_CREATE|os.O_TRUNC|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0o600)
	if errors.Is(err, syscall.ENXIO) && isFIFO(os.Lstat(path)) {
		return nil, func() (*os.File, error) { return openChecked(path, flags|syscall.O_NOFOLLOW) }, nil
	}
	if err != nil {
		st, lerr := os.Lstat(path)
		if lerr != nil || st.Mode()&os.ModeSymlink == 0 {
			return nil, nil, socketError(path, st, err)
		}
		// A link: to a FIFO or a character device only.
		if st, err := os.Stat(path); err != nil || !streamMode(st.Mode()) {
			return nil, nil, fmt.Errorf("%s %w (it leads to no FIFO or character device)", path, errRecordSymlink)
		}
		f, err = openChecked(path, flags|syscall.O_NONBLOCK)
		if errors.Is(err, syscall.ENXIO) && isFIFO(os.Stat(path)) {
			return nil, func() (*os.File, error) { return openChecked(path, flags) }, nil
		}
		if err != nil {
			return nil, nil, fmt.Errorf("%s %w: %w", path, errRecordSymlink, err)
		}
	}
	// Blocking from now on: the capture's goroutine is the only writer,
	// and a pipe that fills up is for it alone to wait on (File.Fd makes
	// the descriptor blocking).
	_ = f.Fd()
	return f, nil, nil
}

// openChecked opens path with flags (never creating or truncating) and
// keeps it only if it is a FIFO or a character device.
func openChecked(path string, flags int) (*os.File, error) {
	f, err := os.OpenFile(path, flags, 0)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err == nil && !streamMode(st.Mode()) {
		err = fmt.Errorf("%s %w (it leads to no FIFO or character device)", path, errRecordSymlink)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// streamMode reports whether m is a FIFO's or a character device's.
func streamMode(m os.FileMode) bool {
	return m&os.ModeNamedPipe != 0 || m&os.ModeCharDevice != 0
}

// isFIFO reports whether the result of a Stat is a FIFO's.
func isFIFO(st os.FileInfo, err error) bool {
	return err == nil && st.Mode()&os.ModeNamedPipe != 0
}

// openAppendNow opens path for appending without waiting: a FIFO with no
// reader (ENXIO) is returned as later, a blocking open for a goroutine
// to make.
func openAppendNow(path string) (f *os.File, later func() (*os.File, error), err error) {
	const flags = os.O_CREATE | os.O_WRONLY | os.O_APPEND | syscall.O_CLOEXEC
	f, err = os.OpenFile(path, flags|syscall.O_NONBLOCK, 0o600)
	if errors.Is(err, syscall.ENXIO) && isFIFO(os.Stat(path)) {
		return nil, func() (*os.File, error) { return os.OpenFile(path, flags, 0o600) }, nil
	}
	if err != nil {
		st, _ := os.Lstat(path)
		return nil, nil, socketError(path, st, err)
	}
	_ = f.Fd() // blocking from now on, as in openRecordFile
	return f, nil, nil
}

// socketError is err, or, when st is a Unix socket's (open(2) fails with
// ENXIO, "no such device or address"), an error that says so.
func socketError(path string, st os.FileInfo, err error) error {
	if st != nil && st.Mode()&os.ModeSocket != 0 {
		return fmt.Errorf("%s is a socket: a file, a FIFO or a character device is written to, not a socket: %w", path, err)
	}
	return err
}

package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync/atomic"
	"time"

	"github.com/acp-normalize/acp-normalize/pipe"
)

// errRecordSymlink is the refusal of a --record path that is a symbolic
// link to anything but a FIFO or a character device: following it would
// truncate (or create) whatever it points to.
var errRecordSymlink = errors.New("is a symbolic link: refusing to follow it")

// errRecordStream is the refusal of a --record or --log-file target that
// is one of the proxy's own protocol streams (--record /dev/stdout): the
// capture or the log would be mixed into the frames (F7), or read back as
// the client's frames.
var errRecordStream = errors.New("is the proxy's own stdin or stdout, which carry protocol frames")

// errRecordLogFile is the refusal of a --record target that is the
// --log-file: opening it would truncate the log, and the two would write
// over each other.
var errRecordLogFile = errors.New("is the --log-file")

// isFile reports whether path names f's file (the same path, a hard or
// symbolic link).
func isFile(path string, f *os.File) bool {
	st, err := os.Stat(path)
	if err != nil {
		return false
	}
	fst, err := f.Stat()
	return err == nil && os.SameFile(st, fst)
}

// recordTarget is where a capture goes (R1). Opening it never waits: a
// FIFO nobody has opened for reading yet is opened by its first Write,
// which the capture's own goroutine makes, so the session starts and
// runs while the FIFO waits for a reader.
type recordTarget struct {
	path   string
	file   io.WriteCloser           // nil while a FIFO waits for a reader
	open   func() (*os.File, error) // the FIFO's blocking open, when file is nil
	opened atomic.Bool              // file is open (read by finishCapture)
}

// Write writes p, opening the FIFO first if it is still waiting for a
// reader. It is called by the capture's goroutine only.
func (r *recordTarget) Write(p []byte) (int, error) {
	if r.file == nil {
		f, err := r.open()
		if err != nil {
			err = fmt.Errorf("opening %s: %w", r.path, err)
			r.open = func() (*os.File, error) { return nil, err }
			return 0, err
		}
		r.file = f
		r.opened.Store(true)
	}
	return r.file.Write(p)
}

// Close closes the file, if it was opened. Only once the capture has
// stopped writing.
func (r *recordTarget) Close() error {
	if r.file == nil {
		return nil
	}
	return r.file.Close()
}

// openRecord opens the --record file (R1): created or truncated, mode
// 0600 even when it existed with a wider mode, never through a symbolic
// link except to a FIFO or a character device (errRecordSymlink; see
// openRecordFile for each OS), never one of the files in avoid (but a
// terminal may be both stdout and the capture's target). It never waits
// for a FIFO's reader.
func openRecord(path string, avoid ...*os.File) (*recordTarget, error) {
	f, later, err := openRecordFile(path)
	if err != nil {
		return nil, err
	}
	t := &recordTarget{path: path, open: later}
	if f == nil {
		// The FIFO is checked again once it opens: avoid files are pipes
		// an editor holds open for reading, so they do not wait here.
		return t, nil
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if isProtocolStream(st, avoid) {
		f.Close()
		return nil, fmt.Errorf("%s %w", path, errRecordStream)
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
	t.file = f
	if onTerminal(f) {
		// --record /dev/stderr on a terminal: frames are spliced in
		// verbatim (R1), and valid JSON holds C1 controls and bidi
		// overrides raw. Shown as JSON escapes, as the other JSON
		// output on a terminal: the same values.
		out, flush := jsonlOut(f)
		t.file = &terminalRecord{f: f, out: out, flush: flush}
	}
	t.opened.Store(true)
	return t, nil
}

// terminalRecord is a recording target that is a terminal: each line
// escaped with terminal.JSON on its way.
type terminalRecord struct {
	f     *os.File
	out   io.Writer
	flush func() error
}

func (t *terminalRecord) Write(p []byte) (int, error) { return t.out.Write(p) }

// Close writes what is held of a last line, then closes the terminal.
func (t *terminalRecord) Close() error { return errors.Join(t.flush(), t.f.Close()) }

// isProtocolStream reports whether st is the file of one of avoid, a
// terminal excepted (it may be stdout and a target at once).
func isProtocolStream(st os.FileInfo, avoid []*os.File) bool {
	if st.Mode()&os.ModeCharDevice != 0 {
		return false
	}
	for _, a := range avoid {
		if a == nil {
			continue
		}
		if ast, err := a.Stat(); err == nil && os.SameFile(st, ast) {
			return true
		}
	}
	return false
}

// waitingForReader reports whether the target is a FIFO that no reader
// has opened yet.
func (r *recordTarget) waitingForReader() bool { return !r.opened.Load() }

// finishCapture writes out what the capture still queues, stops its
// writer and closes its file; an error means the recording is incomplete.
// It waits for the target only while the target takes bytes: after stall
// without progress (a FIFO nobody reads or opens) it gives up, and the
// error counts the records not written (R1). The capture's goroutine is
// then left blocked on the target, and the file open: the proxy exits.
func finishCapture(capture *pipe.CaptureWriter, target *recordTarget, stall time.Duration) error {
	err := capture.CloseWithin(stall)
	if errors.Is(err, pipe.ErrCaptureStalled) {
		if target.waitingForReader() {
			return fmt.Errorf("nobody opened the FIFO for reading: %w", err)
		}
		return err
	}
	return errors.Join(err, target.Close())
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

// logFileOut is the --log-file (F4). A regular file is written directly
// and gets every line. Anything else (a FIFO, a device) goes through a
// bounded backgroundWriter as stderr does, so that a reader that stops,
// or never comes, stalls neither the relay nor the agent: a FIFO nobody
// has opened for reading yet is opened by that writer's goroutine, and
// what does not fit is dropped and counted.
type logFileOut struct {
	w    io.Writer
	file *os.File          // the regular file, closed by Close
	bg   *backgroundWriter // else
}

// openLogFile opens path for appending (mode 0600 when created) without
// waiting for a FIFO's reader, and never one of the files in avoid (the
// proxy's stdin and stdout: log lines there would be frames, F7), but a
// terminal may be both.
func openLogFile(path string, avoid ...*os.File) (*logFileOut, error) {
	f, later, err := openAppendNow(path)
	if err != nil {
		return nil, err
	}
	if f != nil {
		st, err := f.Stat()
		if err != nil {
			f.Close()
			return nil, err
		}
		if isProtocolStream(st, avoid) {
			f.Close()
			return nil, fmt.Errorf("%s %w", path, errRecordStream)
		}
		if st.Mode().IsRegular() {
			return &logFileOut{w: f, file: f}, nil
		}
	}
	t := &recordTarget{path: path, open: later}
	if f != nil {
		t.file = f
		t.opened.Store(true)
	}
	bg := newBackgroundWriter(t, stderrQueueBytes)
	bg.name = "--log-file " + path
	return &logFileOut{w: bg, bg: bg}, nil
}

// Close closes the file, or stops its writer after waiting at most
// wait for it, and says what it could not write.
func (l *logFileOut) Close(wait time.Duration) droppedWrites {
	if l.bg != nil {
		return l.bg.Close(wait)
	}
	_ = l.file.Close()
	return droppedWrites{}
}

// asFile is w as an *os.File, or nil.
func asFile(w any) *os.File {
	f, _ := w.(*os.File)
	return f
}

package main

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/lmittmann/tint"
	"golang.org/x/term"
)

// parseLevel parses debug, info, warn or error.
func parseLevel(s string) (slog.Level, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(strings.TrimSpace(s))); err != nil {
		return 0, fmt.Errorf("--log-level must be debug, info, warn or error, not %q", s)
	}
	return l, nil
}

// useColor reports whether logs to w get colour: only on a terminal, and
// not under NO_COLOR or TERM=dumb.
func useColor(w io.Writer, getenv func(string) string) bool {
	if getenv("NO_COLOR") != "" || getenv("TERM") == "dumb" {
		return false
	}
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// newLogger logs to stderr through tint and, when logFile is set, to that
// file as text. Colour is decided on stderr itself (see useColor); out, if
// not nil, is where the stderr lines are written instead (a
// backgroundWriter in front of stderr).
func newLogger(stderr, out io.Writer, logFile io.Writer, level slog.Level, getenv func(string) string) *slog.Logger {
	if out == nil {
		out = stderr
	}
	h := tint.NewTextHandler(out, &tint.Options{
		Level:      level,
		TimeFormat: time.TimeOnly,
		NoColor:    !useColor(stderr, getenv),
	})
	if logFile == nil {
		return slog.New(h)
	}
	fh := slog.NewTextHandler(logFile, &slog.HandlerOptions{Level: level})
	return slog.New(slog.NewMultiHandler(h, fh))
}

// fanout writes to every writer, ignoring a failing one, so that a closed
// stderr does not stop the log file copy.
type fanout []io.Writer

func (f fanout) Write(p []byte) (int, error) {
	for _, w := range f {
		if w != nil {
			_, _ = w.Write(p)
		}
	}
	return len(p), nil
}

// backgroundWriter hands each write to a goroutine, so that a stderr nobody
// drains (an editor that never reads it) cannot block the relay loops that
// log. When its queue is full, writes are dropped and counted; Close
// reports the count.
type backgroundWriter struct {
	w       io.Writer
	queue   chan []byte
	dropped atomic.Int64
	done    chan struct{}
}

func newBackgroundWriter(w io.Writer, depth int) *backgroundWriter {
	b := &backgroundWriter{w: w, queue: make(chan []byte, depth), done: make(chan struct{})}
	go func() {
		defer close(b.done)
		for p := range b.queue {
			if p == nil {
				return
			}
			_, _ = b.w.Write(p)
		}
	}()
	return b
}

func (b *backgroundWriter) Write(p []byte) (int, error) {
	select {
	case b.queue <- bytes.Clone(p):
	default:
		b.dropped.Add(1)
	}
	return len(p), nil
}

// Close writes what is queued, waiting at most wait, then says how many
// writes were dropped. Later writes are dropped.
func (b *backgroundWriter) Close(wait time.Duration) {
	select {
	case b.queue <- nil:
	case <-time.After(wait):
		return
	}
	select {
	case <-b.done:
	case <-time.After(wait):
		return
	}
	if n := b.dropped.Load(); n > 0 {
		fmt.Fprintf(b.w, "acp-normalize: %d log lines dropped: stderr was not being read\n", n)
	}
}

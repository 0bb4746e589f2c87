package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
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
// file as text.
func newLogger(stderr io.Writer, logFile io.Writer, level slog.Level, getenv func(string) string) *slog.Logger {
	h := tint.NewHandler(stderr, &tint.Options{
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

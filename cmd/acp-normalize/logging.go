package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/lmittmann/tint"
	"golang.org/x/term"

	"github.com/acp-normalize/acp-normalize/internal/terminal"
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
	color := useColor(stderr, getenv)
	h := tint.NewTextHandler(out, &tint.Options{
		Level:       level,
		TimeFormat:  time.TimeOnly,
		NoColor:     !color,
		ReplaceAttr: terminalAttrs(nil),
	})
	if logFile == nil {
		return slog.New(h)
	}
	fh := slog.NewTextHandler(logFile, &slog.HandlerOptions{Level: level})
	return slog.New(slog.NewMultiHandler(h, fh))
}

// terminalAttrs is the ReplaceAttr of a tint handler: every value is
// made safe with terminal.Text, since values carry an agent's words (a
// non-JSON line, a method name, an error message) and tint alone is not
// enough: with colour on it quotes a value but then puts its ESC bytes
// back raw; without colour it cuts from a value what looks like an escape
// sequence and everything after a byte that is not UTF-8, so the line
// shows less than the agent wrote. next, if not nil, runs first.
func terminalAttrs(next func([]string, slog.Attr) slog.Attr) func([]string, slog.Attr) slog.Attr {
	return func(groups []string, a slog.Attr) slog.Attr {
		if next != nil {
			a = next(groups, a)
		}
		switch v := a.Value.Resolve(); v.Kind() {
		case slog.KindString:
			if s := v.String(); !printableASCII(s) {
				a.Value = slog.StringValue(logText(s))
			}
		case slog.KindAny:
			if s := fmt.Sprintf("%+v", v.Any()); !printableASCII(s) {
				a.Value = slog.StringValue(logText(s))
			}
		}
		return a
	}
}

// logText is terminal.Text with U+FFFD (what a byte that is not UTF-8
// becomes) written as the escape \ufffd: tint without colour ends a value
// at the first U+FFFD.
func logText(s string) string {
	return strings.ReplaceAll(terminal.Text(s), "\uFFFD", `\ufffd`)
}

// printableASCII reports whether s is printable ASCII only, which
// terminal.Text leaves as it is: most values, checked without copying.
func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
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

// backgroundWriter hands writes to a goroutine, so that a stderr nobody
// drains (an editor that never reads it) blocks neither the relay loops
// that log nor the copy of the agent's stderr (F4): the agent must never
// wait on the proxy's stderr. It holds at most max bytes; a write that
// does not fit is dropped whole and counted (a log file, when there is
// one, gets every line anyway: it is written directly). Close reports the
// count.
type backgroundWriter struct {
	w    io.Writer
	name string // what w is, for the line Close writes: "stderr"
	max  int
	wake chan struct{} // a token when pending has bytes or Close was called
	done chan struct{} // closed when the goroutine has returned

	mu       sync.Mutex
	pending  []byte // bytes not handed to w yet
	inflight int    // bytes handed to w, not written yet
	spare    []byte // the buffer w wrote last, reused for pending
	closed   bool
	lost     droppedWrites
}

// droppedWrites counts writes a backgroundWriter dropped, and the bytes
// still queued when Close stopped waiting (Unwritten).
type droppedWrites struct{ Writes, Bytes, Unwritten int64 }

func newBackgroundWriter(w io.Writer, max int) *backgroundWriter {
	b := &backgroundWriter{w: w, name: "stderr", max: max, wake: make(chan struct{}, 1), done: make(chan struct{})}
	go b.loop()
	return b
}

func (b *backgroundWriter) loop() {
	defer close(b.done)
	for range b.wake {
		for {
			b.mu.Lock()
			out, closed := b.pending, b.closed
			b.pending, b.spare = b.spare[:0], nil
			b.inflight = len(out)
			b.mu.Unlock()
			if len(out) == 0 {
				if closed {
					return
				}
				break
			}
			_, _ = b.w.Write(out) // may block for good: Close does not wait for it
			b.mu.Lock()
			b.spare, b.inflight = out[:0], 0
			b.mu.Unlock()
		}
	}
}

func (b *backgroundWriter) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return len(p), nil
	}
	if len(b.pending)+len(p) > b.max {
		b.lost.Writes++
		b.lost.Bytes += int64(len(p))
		return len(p), nil
	}
	b.pending = append(b.pending, p...)
	select {
	case b.wake <- struct{}{}:
	default: // the goroutine has a token already
	}
	return len(p), nil
}

// Close queues a line saying how many writes were dropped, if any, and
// waits at most wait for what is queued to be written; it returns the
// count. Later writes are dropped (and not counted).
func (b *backgroundWriter) Close(wait time.Duration) droppedWrites {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return b.lost
	}
	b.closed = true
	lost := b.lost
	if lost.Writes > 0 {
		b.pending = fmt.Appendf(b.pending, "acp-normalize: %d lines (%d bytes) not written to %s: %s was not being read\n", lost.Writes, lost.Bytes, b.name, b.name)
	}
	b.mu.Unlock()
	select {
	case b.wake <- struct{}{}:
	default:
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-b.done:
	case <-t.C:
		b.mu.Lock()
		lost.Unwritten = int64(len(b.pending) + b.inflight)
		b.mu.Unlock()
	}
	return lost
}

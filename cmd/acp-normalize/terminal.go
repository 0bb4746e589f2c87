package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"sync"
	"unicode/utf8"

	"golang.org/x/term"

	"github.com/acp-normalize/acp-normalize/internal/terminal"
)

// onTerminal reports whether w is a terminal.
func onTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// printLine writes one line of a message to w (stderr) through
// terminal.Text: messages quote what a capture, a trace or an
// agent said (a module name in a start event, a trace header's version,
// an error message), which must not steer the terminal.
func printLine(w io.Writer, format string, args ...any) {
	fmt.Fprintln(w, terminal.Text(fmt.Sprintf(format, args...)))
}

// terminalLines is where lines go on their way to a terminal: each line
// through escape, so that what a capture or an agent wrote (C1 controls,
// bidi overrides, OSC sequences) is shown instead of steering the
// terminal. A line is held until its newline: an escape never splits a
// rune. Piped or written to a file, the output is left byte for byte (see
// jsonlOut and textOut).
// terminalLineHeld is how much of an unfinished line terminalLines
// holds before it escapes and writes what it has (up to the last whole
// rune): a line is not held whole, whatever its length.
const terminalLineHeld = 64 << 10

type terminalLines struct {
	w       io.Writer
	escape  func(line []byte) []byte // line without its newline
	partial []byte
}

// jsonlOut is w, or w behind a terminalLines that writes JSON escapes
// (terminal.JSON: the same values) when it is a terminal; flush
// writes what is held of a last line without its newline.
func jsonlOut(w io.Writer) (out io.Writer, flush func() error) {
	return linesOut(w, terminal.JSON)
}

// textOut is w, or w behind a terminalLines that escapes each line with
// terminal.Text when it is a terminal.
func textOut(w io.Writer) (out io.Writer, flush func() error) {
	return linesOut(w, func(line []byte) []byte { return []byte(terminal.Text(string(line))) })
}

func linesOut(w io.Writer, escape func([]byte) []byte) (io.Writer, func() error) {
	if !onTerminal(w) {
		return w, func() error { return nil }
	}
	t := &terminalLines{w: w, escape: escape}
	return t, t.flush
}

func (t *terminalLines) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			t.partial = append(t.partial, p...)
			if len(t.partial) > terminalLineHeld {
				// Escaping is rune by rune: the line's parts give the
				// line's escape.
				k := wholeRunes(t.partial)
				if _, err := t.w.Write(t.escape(t.partial[:k])); err != nil {
					return 0, err
				}
				t.partial = t.partial[:copy(t.partial, t.partial[k:])]
			}
			break
		}
		line := p[:i]
		if len(t.partial) > 0 {
			line = append(t.partial, line...)
		}
		if _, err := t.w.Write(append(t.escape(line), '\n')); err != nil {
			return 0, err
		}
		t.partial, p = t.partial[:0], p[i+1:]
	}
	return n, nil
}

func (t *terminalLines) flush() error {
	if len(t.partial) == 0 {
		return nil
	}
	_, err := t.w.Write(t.escape(t.partial))
	t.partial = t.partial[:0]
	return err
}

// wholeRunes is the length of b without a rune cut short at its end
// (bytes that are not UTF-8 count as whole: they are replaced alone).
func wholeRunes(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if utf8.FullRune(b[i:]) {
				return len(b)
			}
			return i
		}
	}
	return len(b)
}

// agentStderrOut is where the agent's stderr lines go on their way to
// the proxy's stderr (F4): q, the bounded queue to it, or, when stderr is
// a terminal, q behind a terminalLines that escapes each line with
// terminal.Text, so that an agent's control sequences (window title,
// OSC 52 clipboard writes, bidi overrides) are shown, not obeyed. flush
// writes a last line the agent did not end; it may run while the copy of
// the agent's stderr still writes, hence the lock.
func agentStderrOut(stderr, q io.Writer) (out io.Writer, flush func()) {
	if !onTerminal(stderr) {
		return q, func() {}
	}
	l := &lockedLines{t: terminalLines{w: q, escape: func(line []byte) []byte { return []byte(terminal.Text(string(line))) }}}
	return l, func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		_ = l.t.flush()
	}
}

// lockedLines is a terminalLines that two goroutines may write and flush.
type lockedLines struct {
	mu sync.Mutex
	t  terminalLines
}

func (l *lockedLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.t.Write(p)
}

package main

import (
	"bytes"
	"io"
	"os"

	"golang.org/x/term"

	"github.com/acp-normalize/acp-normalize/timeline"
)

// onTerminal reports whether w is a terminal.
func onTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// terminalJSONL is where JSON lines go on their way to a terminal: each
// line through timeline.TerminalJSON, so that a frame's C1 controls, bidi
// overrides and the like are shown as JSON escapes (the same values)
// instead of steering the terminal. A line is held until its newline:
// an escape never splits a rune. Piped or written to a file, the output
// is left byte for byte (see jsonlOut).
type terminalJSONL struct {
	w       io.Writer
	partial []byte
}

// jsonlOut is w, or w behind a terminalJSONL when it is a terminal; flush
// writes what is held of a last line without its newline.
func jsonlOut(w io.Writer) (out io.Writer, flush func() error) {
	if !onTerminal(w) {
		return w, func() error { return nil }
	}
	t := &terminalJSONL{w: w}
	return t, t.flush
}

func (t *terminalJSONL) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			t.partial = append(t.partial, p...)
			break
		}
		line := p[:i+1]
		if len(t.partial) > 0 {
			line = append(t.partial, line...)
		}
		if _, err := t.w.Write(timeline.TerminalJSON(line)); err != nil {
			return 0, err
		}
		t.partial, p = t.partial[:0], p[i+1:]
	}
	return n, nil
}

func (t *terminalJSONL) flush() error {
	if len(t.partial) == 0 {
		return nil
	}
	_, err := t.w.Write(timeline.TerminalJSON(t.partial))
	t.partial = t.partial[:0]
	return err
}

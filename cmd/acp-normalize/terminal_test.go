package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/acp-normalize/acp-normalize/internal/terminal"
)

// TestTerminalLinesBounded: a line on its way to a terminal is escaped
// in parts once it is long, never split inside a rune, so a frame of any
// length (a capture recorded to a terminal, a long JSON line) is not
// held whole; the output is the escape of the whole line.
func TestTerminalLinesBounded(t *testing.T) {
	for _, tt := range []struct {
		name   string
		escape func([]byte) []byte
	}{
		{"JSON escapes", terminal.JSON},
		{"text", func(b []byte) []byte { return []byte(terminal.Text(string(b))) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			tl := &terminalLines{w: &out, escape: tt.escape}
			// Runes of 2, 3 and 4 bytes, C1 controls, a bidi override and
			// a byte that is not UTF-8, cut by writes of 4093 bytes.
			line := []byte(`{"t":"` + strings.Repeat("é€😀\u009b\u202e\xff ", 80_000) + `"}`)
			for p := line; len(p) > 0; {
				n := min(4093, len(p))
				if _, err := tl.Write(p[:n]); err != nil {
					t.Fatal(err)
				}
				p = p[n:]
				if len(tl.partial) > 2*terminalLineHeld {
					t.Fatalf("%d bytes of an unfinished line held", len(tl.partial))
				}
			}
			if _, err := tl.Write([]byte("\n")); err != nil {
				t.Fatal(err)
			}
			if want := append(tt.escape(line), '\n'); !bytes.Equal(out.Bytes(), want) {
				t.Errorf("the output is not the escape of the whole line (%d bytes, want %d)", out.Len(), len(want))
			}
		})
	}
}

package timeline

import (
	"unicode/utf8"
)

// TerminalText makes s safe for a terminal: every rune that could steer
// one or reorder what it shows (C0 and C1 controls, so ESC, CSI, OSC and
// their window-title and OSC 52 clipboard sequences; bidi overrides,
// zero-width and other format characters; line separators) is replaced
// by its visible escape (\u001b, \u202e, \U000e0001), newlines by ↵, and
// invalid UTF-8 by U+FFFD. It is what every command prints agent- or
// capture-controlled text through (replay, check, probe, the logs).
func TerminalText(s string) string { return terminalText(s) }

// TerminalJSON makes JSON text safe for a terminal without changing what
// it says: each rune TerminalText would escape is written as a JSON
// escape (\u009b; a surrogate pair beyond the basic plane). Such runes
// can only stand inside strings, where the escape means the same rune,
// so the result decodes to the same values. A byte that is not UTF-8
// (which JSON text cannot hold; a frame may) becomes U+FFFD, as in
// TerminalText: a lone 0x9b is CSI to a terminal that reads 8-bit
// controls.
func TerminalJSON(b []byte) []byte {
	var out []byte
	last := 0
	for i := 0; i < len(b); {
		if c := b[i]; c >= 0x20 && c < 0x7f {
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		invalid := r == utf8.RuneError && size <= 1
		if !invalid && (!unsafeRune(r) || r == '\n' || r == '\t' || r == '\r') {
			// Whitespace between tokens (json.Indent's) stays.
			i += size
			continue
		}
		out = append(out, b[last:i]...)
		switch {
		case invalid:
			out = utf8.AppendRune(out, utf8.RuneError)
		case r > 0xffff:
			hi, lo := utf16Pair(r)
			out = appendJSONEscape(appendJSONEscape(out, hi), lo)
		default:
			out = appendJSONEscape(out, r)
		}
		i += size
		last = i
	}
	if out == nil {
		return b
	}
	return append(out, b[last:]...)
}

// utf16Pair is r's UTF-16 surrogate pair (r beyond the basic plane).
func utf16Pair(r rune) (hi, lo rune) {
	r -= 0x10000
	return 0xd800 + (r>>10)&0x3ff, 0xdc00 + r&0x3ff
}

func appendJSONEscape(b []byte, r rune) []byte {
	const hex = "0123456789abcdef"
	return append(b, '\\', 'u', hex[r>>12&0xf], hex[r>>8&0xf], hex[r>>4&0xf], hex[r&0xf])
}

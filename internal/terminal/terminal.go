package terminal

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Text makes s safe for a terminal: every rune that could steer
// one or reorder what it shows (C0 and C1 controls, so ESC, CSI, OSC and
// their window-title and OSC 52 clipboard sequences; bidi overrides,
// zero-width and other format characters; line separators) is replaced
// by its visible escape (\u001b, \u202e, \U000e0001), newlines by ↵, and
// invalid UTF-8 by U+FFFD. It is what every command prints agent- or
// capture-controlled text through (replay, check, probe, the logs).
func Text(s string) string { return Line(s, -1) }

// JSON makes JSON text safe for a terminal without changing what
// it says: each rune Text would escape is written as a JSON
// escape (\u009b; a surrogate pair beyond the basic plane). Such runes
// can only stand inside strings, where the escape means the same rune,
// so the result decodes to the same values. A byte that is not UTF-8
// (which JSON text cannot hold; a frame may) becomes U+FFFD, as in
// Text: a lone 0x9b is CSI to a terminal that reads 8-bit
// controls.
func JSON(b []byte) []byte {
	var out []byte
	last := 0
	for i := 0; i < len(b); {
		if c := b[i]; c >= 0x20 && c < 0x7f {
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		invalid := r == utf8.RuneError && size <= 1
		if !invalid && (!Unsafe(r) || r == '\n' || r == '\t' || r == '\r') {
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

// Line flattens s to one line (newlines shown as ↵) of at most limit
// characters, marking a cut with …, and makes it safe for a terminal (see
// Unsafe). Invalid UTF-8 is replaced; limit -1 is no limit.
func Line(s string, limit int) string {
	var sb strings.Builder
	n := 0
	for _, r := range strings.ToValidUTF8(s, "\uFFFD") {
		if n == limit {
			sb.WriteString("…")
			break
		}
		switch {
		case r == '\n':
			sb.WriteRune('↵')
		case r == '\r':
			continue
		case r == '\t':
			sb.WriteRune(' ')
		case Unsafe(r):
			sb.WriteString(escape(r))
		default:
			sb.WriteRune(r)
		}
		n++
	}
	return sb.String()
}

// Unsafe reports whether r must not reach a terminal as is: C0 and C1
// control characters (ESC, CSI U+009B, OSC U+009D, ST U+009C, ...), format
// characters (bidi overrides such as U+202E, zero-width characters) and
// the line and paragraph separators. Frame data is vendor data: printed
// raw, it could set the window title, write the clipboard (OSC 52) or hide
// text.
func Unsafe(r rune) bool {
	return unicode.IsControl(r) || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp)
}

// escape is the visible replacement of an unsafe rune: \u009b, or
// \U000e0001 beyond the basic plane.
func escape(r rune) string {
	if r > 0xffff {
		return fmt.Sprintf(`\U%08x`, r)
	}
	return fmt.Sprintf(`\u%04x`, r)
}

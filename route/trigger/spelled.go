package trigger

import (
	"strings"
)

// A quoted trigger is JSON text: strings and punctuation, written compact.
// The same text can be spelled otherwise — white space between the
// tokens, any character of a string escaped (`"invoke\u005fagent__"`,
// `"session\/close"`) — and a parser reads it the same, so the index
// finds those spellings too (a Gemini launch written with ": "
// or with an escape got no snapshot).
//
// It costs next to nothing where a frame has none of them: the compact
// spelling is still found by comparing bytes, and another spelling can
// only start at a quote that begins or ends a string (one a backslash does
// not precede) and there differ from a trigger at an escape or a blank.
// Such a quote is a candidate; only candidates are decoded, a few
// characters at a time. A quote whose next two bytes hold a backslash is
// told by the group table itself (spelledGroup); one whose next two bytes
// open a trigger costs one search for a backslash within the longest
// trigger. Measured in instructions (cachegrind) against the index
// without it: a chunk through the router with every module +0.6%, with
// the memo as the relay uses it unchanged, a full Match of a chunk +15%.

// token is one JSON token of a quoted trigger: a string (text, without its
// quotes, the trigger's last one maybe without its closing quote) or a
// punctuation byte.
type token struct {
	text   string
	punct  byte // ':', ',', '{', '}', '[' or ']'; 0 for a string
	prefix bool // a string token whose closing quote is not part of the trigger
}

// spellReach is how far past a quote the check of whether it is a
// candidate reads, besides the trigger's own length: the two bytes the
// table is indexed by (what a candidate's check reads past that is the
// memo's to look at again, Memo.respell).
const spellReach = 3

// parseTrigger splits a quoted trigger into its tokens; nil when it is no
// such JSON text (then only its exact bytes are found). Its strings must
// be printable ASCII without backslashes, and the first one not empty.
func parseTrigger(pat string) []token {
	var toks []token
	for i := 0; i < len(pat); {
		switch c := pat[i]; {
		case c == '"':
			j := strings.IndexByte(pat[i+1:], '"')
			if j < 0 {
				toks = append(toks, token{text: pat[i+1:], prefix: true})
				i = len(pat)
				break
			}
			toks = append(toks, token{text: pat[i+1 : i+1+j]})
			i += j + 2
		case strings.IndexByte(":,{}[]", c) >= 0:
			toks = append(toks, token{punct: c})
			i++
		default:
			return nil
		}
	}
	if len(toks) == 0 || toks[0].punct != 0 || toks[0].text == "" {
		return nil
	}
	for _, tk := range toks {
		for k := 0; k < len(tk.text); k++ {
			if c := tk.text[k]; c < 0x20 || c > 0x7e || c == '\\' {
				return nil
			}
		}
	}
	return toks
}

// asciiChar decodes the string character at b[i] when it is ASCII, raw or
// escaped: the byte, and the offset past it. ok is false at the string's
// end, for a character that is not ASCII (no trigger holds one), and for
// a malformed escape.
func asciiChar(b []byte, i int) (c byte, next int, ok bool) {
	if i >= len(b) {
		return 0, i, false
	}
	switch c = b[i]; {
	case c == '"' || c < 0x20 || c >= 0x80:
		return 0, i, false
	case c != '\\':
		return c, i + 1, true
	}
	if i+1 >= len(b) {
		return 0, i, false
	}
	switch e := b[i+1]; e {
	case '"', '\\', '/':
		return e, i + 2, true
	case 'b':
		return '\b', i + 2, true
	case 'f':
		return '\f', i + 2, true
	case 'n':
		return '\n', i + 2, true
	case 'r':
		return '\r', i + 2, true
	case 't':
		return '\t', i + 2, true
	case 'u':
		if i+6 > len(b) || b[i+2] != '0' || b[i+3] != '0' {
			return 0, i, false
		}
		hi, lo := unhex(b[i+4]), unhex(b[i+5])
		if hi > 7 || lo > 15 {
			return 0, i, false
		}
		return hi<<4 | lo, i + 6, true
	}
	return 0, i, false
}

// unhex returns the value of a hex digit, or 16.
func unhex(c byte) byte {
	switch {
	case '0' <= c && c <= '9':
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10
	}
	return 16
}

// spelledAt reports whether the JSON text at frame[i] (a quote) reads as
// toks, and where it ends.
func spelledAt(frame []byte, i int, toks []token) (end int, ok bool) {
	for k, tk := range toks {
		if k > 0 {
			i = skipSpace(frame, i)
		}
		if tk.punct != 0 {
			if i >= len(frame) || frame[i] != tk.punct {
				return 0, false
			}
			i++
			continue
		}
		if i >= len(frame) || frame[i] != '"' {
			return 0, false
		}
		i++
		for j := 0; j < len(tk.text); j++ {
			c, next, ok := asciiChar(frame, i)
			if !ok || c != tk.text[j] {
				return 0, false
			}
			i = next
		}
		if !tk.prefix {
			if i >= len(frame) || frame[i] != '"' {
				return 0, false
			}
			i++
		}
	}
	return i, true
}

// structural reports whether the quote at frame[i] begins or ends a
// string: no backslash precedes it (one that does is inside a string, or
// closes one ending in an escaped backslash: no string starts there).
func structural(frame []byte, i int) bool { return i == 0 || frame[i-1] != '\\' }

// matchSpelled is the check at a structural quote frame[i] whose string
// has an escape in its first two characters, a candidate (note, when set,
// records it: the memo must look at it again, MatchMemo): the characters
// are decoded and the triggers opening with them compared in full.
func (x *Index) matchSpelled(frame []byte, i int, mask uint64, note *int) uint64 {
	noteCandidate(note, i)
	c1, next, ok := asciiChar(frame, i+1)
	if !ok {
		return mask
	}
	c2, _, ok := asciiChar(frame, next)
	if !ok {
		if next >= len(frame) || frame[next] != '"' {
			return mask
		}
		c2 = '"' // a one-character string: its closing quote
	}
	g := x.group[uint16(c1)<<8|uint16(c2)]
	if g == 0 || g == spelledGroup {
		return mask
	}
	for _, t := range x.groups[g-1] {
		if mask&t.bit != t.bit && t.toks != nil {
			if end, ok := spelledAt(frame, i, t.toks); ok && (!t.method || x.unknownMethodAt(frame[end:])) {
				mask |= t.bit
			}
		}
	}
	return mask
}

// noteCandidate records a candidate quote at offset i: *note becomes the
// smallest offset recorded.
func noteCandidate(note *int, i int) {
	if note != nil && i < *note {
		*note = i
	}
}

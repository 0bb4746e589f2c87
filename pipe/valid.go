package pipe

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
)

// MaxDepth is the deepest nesting of a frame the proxy rewrites, records
// as a frame or replays (Check): one less than encoding/json's limit
// (10000), which the capture reader and many clients share, because a
// capture line nests its frame one level deeper and must still be
// readable. A deeper frame is relayed byte for byte (P1) and recorded as
// text; no module sees it (P5).
const MaxDepth = 9999

// maxValidDepth is MaxDepth, for validJSON.
const maxValidDepth = MaxDepth

// ErrNotJSON and ErrTooDeep are what Check finds wrong with a frame.
var (
	ErrNotJSON = errors.New("not valid JSON")
	ErrTooDeep = fmt.Errorf("nested deeper than %d levels", MaxDepth)
)

// Check reports why b is not one JSON value nested at most MaxDepth deep
// (an error wrapping ErrNotJSON or ErrTooDeep, with the offset where the
// walk stopped), or nil. It walks b once, as Valid does.
func Check(b []byte) error {
	switch at, deep := walkJSON(b); {
	case deep:
		return fmt.Errorf("%w (at offset %d of %d)", ErrTooDeep, at, len(b))
	case at >= 0:
		return fmt.Errorf("%w (at offset %d of %d)", ErrNotJSON, at, len(b))
	}
	return nil
}

// validJSON reports whether b is one JSON value, with white space around
// it allowed, as encoding/json.Valid does (strings are not checked for
// valid UTF-8, as there), up to maxValidDepth levels of nesting. It is a
// plain loop over the bytes, several times faster than json.Valid on long
// strings: the capture writer checks every frame with it.
func validJSON(b []byte) bool {
	at, _ := walkJSON(b)
	return at < 0
}

// walkJSON is validJSON, returning -1 for a valid b, else the offset at
// which the walk stopped and whether it stopped because b nests deeper
// than maxValidDepth.
func walkJSON(b []byte) (at int, deep bool) {
	var stack []byte // the open containers, '{' or '['
	i := skipSpace(b, 0)
	for {
		// A value starts at i.
		if i >= len(b) {
			return i, false
		}
		ok := true
		start := i
		switch c := b[i]; {
		case c == '{' || c == '[':
			if len(stack) >= maxValidDepth {
				return i, true
			}
			i = skipSpace(b, i+1)
			if i < len(b) && (c == '{' && b[i] == '}' || c == '[' && b[i] == ']') {
				i++ // empty: the value is complete
				break
			}
			stack = append(stack, c)
			if c == '{' {
				if i, ok = validKey(b, i); !ok {
					return start, false
				}
			}
			continue
		case c == '"':
			i, ok = validString(b, i)
		case c == '-' || '0' <= c && c <= '9':
			i, ok = validNumber(b, i)
		case c == 't':
			i, ok = validLiteral(b, i, "true")
		case c == 'f':
			i, ok = validLiteral(b, i, "false")
		case c == 'n':
			i, ok = validLiteral(b, i, "null")
		default:
			return i, false
		}
		if !ok {
			return start, false
		}
		// A value ended at i: close containers until the next value.
		for {
			i = skipSpace(b, i)
			if len(stack) == 0 {
				if i == len(b) {
					return -1, false
				}
				return i, false
			}
			if i >= len(b) {
				return i, false
			}
			top := stack[len(stack)-1]
			if b[i] == ',' {
				i = skipSpace(b, i+1)
				if top == '{' {
					j, ok := validKey(b, i)
					if !ok {
						return i, false
					}
					i = j
				}
				break
			}
			if top == '{' && b[i] == '}' || top == '[' && b[i] == ']' {
				stack = stack[:len(stack)-1]
				i++
				continue
			}
			return i, false
		}
	}
}

// validKey checks `"key" :` at b[i] and returns where the value starts.
func validKey(b []byte, i int) (int, bool) {
	if i >= len(b) || b[i] != '"' {
		return 0, false
	}
	i, ok := validString(b, i)
	if !ok {
		return 0, false
	}
	i = skipSpace(b, i)
	if i >= len(b) || b[i] != ':' {
		return 0, false
	}
	return skipSpace(b, i+1), true
}

// validString checks the string at b[i] == '"' and returns the offset past
// its closing quote.
func validString(b []byte, i int) (int, bool) {
	for i++; i < len(b); i++ {
		// Eight plain bytes at a time (no quote, backslash or control
		// byte: a SWAR test); the byte that stops it is looked at below.
		for i+8 <= len(b) {
			const ones, highs = 0x0101010101010101, 0x8080808080808080
			x := binary.LittleEndian.Uint64(b[i:])
			q, bs := x^(0x22*ones), x^(0x5C*ones)
			// The lowest flagged byte of each term is exact (the usual
			// zero-byte test): a control byte, a quote, a backslash.
			special := ((x-0x20*ones)&^x | (q-ones)&^q | (bs-ones)&^bs) & highs
			if special != 0 {
				i += bits.TrailingZeros64(special) / 8
				break
			}
			i += 8
		}
		if i >= len(b) {
			break
		}
		c := b[i]
		switch {
		case c == '"':
			return i + 1, true
		case c < 0x20:
			return 0, false
		case c == '\\':
			i++
			if i >= len(b) {
				return 0, false
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(b) {
					return 0, false
				}
				for _, h := range b[i+1 : i+5] {
					if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
						return 0, false
					}
				}
				i += 4
			default:
				return 0, false
			}
		}
	}
	return 0, false
}

// validNumber checks the number at b[i] and returns the offset past it:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func validNumber(b []byte, i int) (int, bool) {
	digits := func(i int) int {
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
		return i
	}
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		i = digits(i + 1)
	default:
		return 0, false
	}
	if i < len(b) && b[i] == '.' {
		j := digits(i + 1)
		if j == i+1 {
			return 0, false
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(i)
		if j == i {
			return 0, false
		}
		i = j
	}
	return i, true
}

func validLiteral(b []byte, i int, lit string) (int, bool) {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return 0, false
	}
	return i + len(lit), true
}

// Valid reports whether b is one JSON value nested at most MaxDepth deep,
// as validJSON does: the check of encoding/json.Valid (but for its
// nesting limit, one less), several times faster on long strings. Check
// says why not.
func Valid(b []byte) bool { return validJSON(b) }

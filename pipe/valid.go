package pipe

import "encoding/binary"

// maxDepth is encoding/json's nesting limit, which Valid shares.
const maxDepth = 10000

// strPlain marks the bytes a JSON string holds as they are: not the
// closing quote, not a backslash, not a control character.
var strPlain = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// Valid reports whether b is one JSON value, exactly as encoding/json's
// Valid does (same grammar, same nesting limit, string bytes not checked
// for UTF-8), several times faster on long strings: a module may check a
// multi-megabyte frame (a file read) before it takes anything from it.
func Valid(b []byte) bool {
	var stackBuf [64]byte
	stack := stackBuf[:0] // '{' or '[' for each open container
	i := skipSpace(b, 0)
	for {
		// A value starts at i.
		if i >= len(b) {
			return false
		}
		var ok bool
		switch c := b[i]; {
		case c == '{' || c == '[':
			if len(stack) == maxDepth {
				return false
			}
			stack = append(stack, c)
			i = skipSpace(b, i+1)
			if i < len(b) && b[i] == c+2 { // '}' or ']'
				stack = stack[:len(stack)-1]
				i++
				ok = true
				break
			}
			if c == '{' {
				if i, ok = validKey(b, i); !ok {
					return false
				}
			}
			continue
		case c == '"':
			i, ok = validString(b, i)
		case c == '-' || (c >= '0' && c <= '9'):
			i, ok = validNumber(b, i)
		case c == 't':
			i, ok = validLiteral(b, i, "true")
		case c == 'f':
			i, ok = validLiteral(b, i, "false")
		case c == 'n':
			i, ok = validLiteral(b, i, "null")
		}
		if !ok {
			return false
		}
		// A value ended at i: close containers, or go on to the next.
		for {
			i = skipSpace(b, i)
			if len(stack) == 0 {
				return i == len(b)
			}
			if i >= len(b) {
				return false
			}
			top := stack[len(stack)-1]
			if b[i] == top+2 {
				stack = stack[:len(stack)-1]
				i++
				continue
			}
			if b[i] != ',' {
				return false
			}
			i = skipSpace(b, i+1)
			if top == '{' {
				if i, ok = validKey(b, i); !ok {
					return false
				}
			}
			break
		}
	}
}

// validKey checks a member's key and colon at b[i], and returns the offset
// of its value.
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

// validString checks the string at b[i] (a quote) and returns the offset
// past it.
func validString(b []byte, i int) (int, bool) {
	j := i + 1
	for {
		j = skipPlain(b, j)
		for j < len(b) && strPlain[b[j]] {
			j++
		}
		if j >= len(b) {
			return 0, false
		}
		switch b[j] {
		case '"':
			return j + 1, true
		case '\\':
			if j+1 >= len(b) {
				return 0, false
			}
			switch b[j+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				j += 2
			case 'u':
				if j+6 > len(b) {
					return 0, false
				}
				for _, h := range b[j+2 : j+6] {
					if !isHex(h) {
						return 0, false
					}
				}
				j += 6
			default:
				return 0, false
			}
		default: // a control character
			return 0, false
		}
	}
}

// skipPlain skips eight bytes at a time while none of them ends the plain
// run of a string (a quote, a backslash, a control character).
func skipPlain(b []byte, j int) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for j+8 <= len(b) {
		w := binary.LittleEndian.Uint64(b[j:])
		q, bs := w^(ones*'"'), w^(ones*'\\')
		// A byte is zero in q or bs, or below 0x20 in w (the "has zero"
		// and "has less" word tricks: exact as to whether there is one).
		if ((q-ones)&^q|(bs-ones)&^bs|(w-ones*0x20)&^w)&highs != 0 {
			return j
		}
		j += 8
	}
	return j
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// validNumber checks the number at b[i] and returns the offset past it.
func validNumber(b []byte, i int) (int, bool) {
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = digits(b, i)
	default:
		return 0, false
	}
	if i < len(b) && b[i] == '.' {
		j := digits(b, i+1)
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
		j := digits(b, i)
		if j == i {
			return 0, false
		}
		i = j
	}
	return i, true
}

func digits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

func validLiteral(b []byte, i int, lit string) (int, bool) {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return 0, false
	}
	return i + len(lit), true
}

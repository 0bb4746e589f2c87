package rawjson

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// FirstByte returns the first non-blank byte of b, or 0.
func FirstByte(b []byte) byte {
	i := SkipSpace(b, 0)
	if i < len(b) {
		return b[i]
	}
	return 0
}

// DecodeString decodes the raw JSON string raw (quotes included) as
// encoding/json does: escapes decoded, invalid UTF-8 and lone surrogates
// replaced by U+FFFD. ok is false when raw is no valid JSON string. The
// result is built in one allocation of at most about len(raw) bytes.
func DecodeString(raw []byte) (s string, ok bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	body := raw[1 : len(raw)-1]
	if plainString(body) {
		return string(body), true
	}
	var b strings.Builder
	b.Grow(len(body))
	for i := 0; i < len(body); {
		c := body[i]
		switch {
		case c == '\\':
			if i+1 >= len(body) {
				return "", false
			}
			switch e := body[i+1]; e {
			case '"', '\\', '/':
				b.WriteByte(e)
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case 'u':
				r, ok := hex4(body, i+2)
				if !ok {
					return "", false
				}
				i += 6
				if utf16.IsSurrogate(r) {
					if r2, ok := lowSurrogate(body, i); ok {
						if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
							i += 6
							b.WriteRune(dec)
							continue
						}
					}
					r = utf8.RuneError
				}
				b.WriteRune(r)
				continue
			default:
				return "", false
			}
			i += 2
		case c == '"' || c < 0x20:
			return "", false
		case c < utf8.RuneSelf:
			// A run of plain ASCII is copied in one go.
			j := i + 1
			for j < len(body) && body[j] < utf8.RuneSelf && body[j] >= 0x20 && body[j] != '"' && body[j] != '\\' {
				j++
			}
			b.Write(body[i:j])
			i = j
		default:
			r, size := utf8.DecodeRune(body[i:])
			if r == utf8.RuneError && size == 1 {
				b.WriteRune(utf8.RuneError)
			} else {
				b.Write(body[i : i+size])
			}
			i += size
		}
	}
	return b.String(), true
}

// plainString reports whether a string body needs no decoding: no escape,
// no quote, no control byte, valid UTF-8.
func plainString(body []byte) bool {
	ascii := true
	for _, c := range body {
		if c < 0x20 || c == '"' || c == '\\' {
			return false
		}
		if c >= utf8.RuneSelf {
			ascii = false
		}
	}
	return ascii || utf8.Valid(body)
}

// lowSurrogate reads a \uXXXX escape at body[i:] that is a low surrogate.
func lowSurrogate(body []byte, i int) (rune, bool) {
	if i+1 >= len(body) || body[i] != '\\' || body[i+1] != 'u' {
		return 0, false
	}
	r, ok := hex4(body, i+2)
	return r, ok && r >= 0xDC00 && r < 0xE000
}

func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// UnescapeKey decodes a raw object key, as Member.Key holds it (the bytes
// between the quotes, escapes not decoded).
func UnescapeKey(raw []byte) (string, bool) {
	if plainString(raw) {
		return string(raw), true
	}
	q := make([]byte, 0, len(raw)+2)
	q = append(append(append(q, '"'), raw...), '"')
	return DecodeString(q)
}

const hexDigits = "0123456789abcdef"

// AppendString appends s as a JSON string, byte for byte as encoding/json
// writes it with HTML escaping off (<, > and & stay as they are; invalid
// UTF-8 becomes \ufffd; U+2028 and U+2029 are escaped).
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '\\', '"':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// StringLen returns len(AppendString(nil, s)), to size a buffer once.
func StringLen(s string) int {
	n := len(s) + 2
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c >= 0x20 && c != '"' && c != '\\':
			case c == '"' || c == '\\' || c == '\b' || c == '\f' || c == '\n' || c == '\r' || c == '\t':
				n++
			default:
				n += 5
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			n += 5 // \ufffd for one byte
		case r == '\u2028' || r == '\u2029':
			n += 6 - size
		}
		i += size
	}
	return n
}

// Marshal encodes v as compact JSON without escaping <, > and &, and
// without a trailing newline.
func Marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}), nil
}

// Text returns the JSON string encoding s (no HTML escaping).
func Text(s string) []byte { return AppendString(make([]byte, 0, StringLen(s)), s) }

// ScalarText is the scalar member at path as text: a string decoded, a
// number as written; "" for anything else or nothing.
func ScalarText(frame []byte, path ...string) string {
	v, ok := Lookup(frame, path...)
	if !ok {
		return ""
	}
	if s, ok := DecodeString(v); ok {
		return s
	}
	if c := FirstByte(v); c == '-' || c >= '0' && c <= '9' {
		return string(v)
	}
	return ""
}

// Truthy reports whether a raw JSON value is truthy as JavaScript reads
// it (the SDKs that carry _meta.subagents are JavaScript's): anything but
// absent, null, false, 0 and "".
func Truthy(v []byte) bool {
	switch c := FirstByte(v); {
	case v == nil, c == 'n', c == 'f':
		return false
	case c == '"':
		s, _ := DecodeString(v)
		return s != ""
	case c == '-' || (c >= '0' && c <= '9'):
		n, err := strconv.ParseFloat(string(v), 64)
		return err != nil || n != 0
	}
	return true
}

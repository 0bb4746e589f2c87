package pipe

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf16"
)

// IDKey returns the key under which a raw JSON-RPC id is tracked: equal
// for ids that are the same value however they are spelled ("a" and
// "\u0061", 100 and 1E2, 1.5 and 1.50), so that an agent's answer matches
// the client's request (rule F6). The common spellings (a string without
// escapes, an integer) are their own key; only others are decoded. It is
// the one id equality: the router pairs answers with requests by it, and
// check, replay and the timeline pair them the same way.
func IDKey(raw string) string {
	switch {
	case len(raw) >= 2 && raw[0] == '"':
		if strings.IndexByte(raw, '\\') < 0 {
			return raw
		}
		if key, ok := stringKey(raw); ok {
			return key
		}
		return raw
	case plainInteger(raw):
		return raw
	case len(raw) > 0 && len(raw) <= maxNumericIDLen && (raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9'):
		if !smallExponent(raw) {
			return raw // 1e999999999 would take big.Rat minutes
		}
		n, ok := new(big.Rat).SetString(raw)
		if !ok {
			return raw
		}
		if n.IsInt() {
			return n.Num().String() // "1E2" -> "100", "-0" -> "0"
		}
		return n.RatString() // "1.50" -> "3/2", never an integer's spelling
	}
	return raw
}

// maxNumericIDLen bounds the numbers IDKey decodes; a longer one (no
// client sends one) is its own key.
const maxNumericIDLen = 64

// smallExponent reports whether a number's exponent, if any, is within
// ±400, which keeps decoding it cheap.
func smallExponent(raw string) bool {
	i := strings.IndexAny(raw, "eE")
	if i < 0 {
		return true
	}
	exp, err := strconv.Atoi(strings.TrimPrefix(raw[i+1:], "+"))
	return err == nil && exp >= -400 && exp <= 400
}

// plainInteger reports whether raw is an integer spelled canonically:
// digits, an optional minus, no leading zero, not -0.
func plainInteger(raw string) bool {
	digits := raw
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
		if len(digits) == 1 && digits[0] == '0' {
			return false
		}
	}
	if len(digits) == 0 || len(digits) > 1 && digits[0] == '0' {
		return false
	}
	for i := range len(digits) {
		if digits[i] < '0' || digits[i] > '9' {
			return false
		}
	}
	return true
}

// stringKey returns the key of a JSON string id spelled with escapes:
// its value as JavaScript reads it (UTF-16: a lone surrogate is a value
// of its own, where Go would decode it to U+FFFD), written out with a
// backslash only before a backslash of the value and in \uXXXX for a
// lone surrogate. Two keys are equal exactly when the values are, and a
// value with neither is written as an id spelled without escapes is.
// ok is false for a spelling that is no JSON string.
func stringKey(raw string) (key string, ok bool) {
	if len(raw) < 2 || raw[len(raw)-1] != '"' {
		return "", false
	}
	body := raw[1 : len(raw)-1]
	var b strings.Builder
	b.Grow(len(raw))
	b.WriteByte('"')
	for i := 0; i < len(body); {
		c := body[i]
		if c == '"' {
			return "", false
		}
		if c != '\\' {
			b.WriteByte(c)
			i++
			continue
		}
		if i+1 >= len(body) {
			return "", false
		}
		switch e := body[i+1]; e {
		case '"', '/':
			b.WriteByte(e)
		case '\\':
			b.WriteString(`\\`)
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
			r, ok := hex4(body[i+2:])
			if !ok {
				return "", false
			}
			i += 6
			switch {
			case utf16.IsSurrogate(r):
				if r < 0xdc00 && strings.HasPrefix(body[i:], `\u`) {
					if lo, ok := hex4(body[i+2:]); ok && lo >= 0xdc00 && lo <= 0xdfff {
						b.WriteRune(utf16.DecodeRune(r, lo))
						i += 6
						continue
					}
				}
				fmt.Fprintf(&b, `\u%04x`, r)
			case r == '\\':
				b.WriteString(`\\`)
			default:
				b.WriteRune(r)
			}
			continue
		default:
			return "", false
		}
		i += 2
	}
	b.WriteByte('"')
	return b.String(), true
}

// hex4 reads the four hex digits s starts with.
func hex4(s string) (rune, bool) {
	if len(s) < 4 {
		return 0, false
	}
	n, err := strconv.ParseUint(s[:4], 16, 16)
	return rune(n), err == nil
}

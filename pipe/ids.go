package pipe

import (
	"encoding/json"
	"math/big"
	"strconv"
	"strings"
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
		var s string
		if err := json.Unmarshal([]byte(raw), &s); err != nil {
			return raw
		}
		// Injective: a decoded string with a quote or backslash cannot
		// be the raw spelling of another string id.
		return `"` + s + `"`
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

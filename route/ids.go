package route

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/acp-normalize/acp-normalize/rewrite"
)

// IDKey returns the key under which a raw JSON-RPC id is tracked: equal
// for ids that are the same value however they are spelled ("a" and
// "\u0061", 100 and 1E2, 1.5 and 1.50), so that an agent's answer matches
// the client's request (rule F6). The common spellings (a string without
// escapes, an integer) are their own key; only others are decoded.
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

// NewIDToken returns a random token that makes the ids of this proxy's
// own requests unique, so that a proxy behind another one never mistakes
// the other's requests for its own (rule C12).
func NewIDToken() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return hex.EncodeToString(b)
}

// proxyIDPrefix is the start of this router's own request ids, quotes
// included: `"acp-normalize:TOKEN:`, or `"acp-normalize:` without a token.
func proxyIDPrefix(token string) []byte {
	if token == "" {
		return []byte(`"` + rewrite.ProxyIDPrefix)
	}
	return []byte(`"` + rewrite.ProxyIDPrefix + token + ":")
}

// ownProxyID reports whether rawID is spelled like one of this router's
// own request ids (prefix, then digits only), and returns its key in
// proxyReqs and its number. Another proxy's ids (another token) are not.
// Being spelled like one does not make it one: a client may use such ids
// for its own requests (see Router.proxyAnswer).
func (r *Router) ownProxyID(rawID []byte) (key string, n uint64, ok bool) {
	if bytes.IndexByte(rawID, '\\') >= 0 {
		rawID = []byte(IDKey(string(rawID))) // spelled with escapes
	}
	rest, ok := bytes.CutPrefix(rawID, r.idPrefix)
	if !ok || len(rest) < 2 || rest[len(rest)-1] != '"' {
		return "", 0, false
	}
	for _, c := range rest[:len(rest)-1] {
		if c < '0' || c > '9' {
			return "", 0, false
		}
	}
	n, err := strconv.ParseUint(string(rest[:len(rest)-1]), 10, 64)
	if err != nil {
		n = math.MaxUint64 // too many digits: a number the proxy never reaches
	}
	return string(rawID), n, true
}

// maxSkippedID bounds how far a client's id can move the proxy's next id
// (see Router.skipClientID): past it the counter could wrap.
const maxSkippedID = 1 << 62

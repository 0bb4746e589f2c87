package route

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"math"
	"strconv"

	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite"
)

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
		rawID = []byte(pipe.IDKey(string(rawID))) // spelled with escapes
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

package pipe

import (
	"bytes"
	"encoding/base64"
	"unicode/utf8"
)

// The secrets a text can be searched for by their shape (rule R2): in a
// line that is not valid JSON, and inside every string value of a frame.
//
// Each shape has a literal marker (a token's prefix, "bearer", "://",
// ...) and, in it, an anchor: a byte that is rare in prose and code ('_',
// '-', ':', 'J', ...). The search keeps the next occurrence of each anchor
// byte (bytes.IndexByte: vector code), visits them left to right, checks
// the markers anchored there, and checks a shape at its marker with a
// bounded look around it; after a secret it goes on past it. Each byte is
// looked at a bounded number of times, so the time is linear in the text.
// (Go's regexp, which this replaces, is linear too but ran at about 15
// MB/s on prose; a search per marker would look at every 's' for "sk-".)

// span is a part [start, end) of a text that is a secret.
type span struct{ start, end int }

// marker is a literal that starts a secret, or says that a string may
// hold one.
type marker struct {
	text   string
	fold   bool // any ASCII letter case (text is lower case)
	anchor int  // the offset in text of the byte searched for
}

// shape is one kind of secret: at an occurrence of its marker, match
// returns the part that is secret.
type shape struct {
	marker
	match func(s []byte, at int) (span, bool)
}

func exact(text string, anchor int) marker { return marker{text: text, anchor: anchor} }

// shapes are the secrets docs/debugging.md lists ("What redaction
// catches"). A token shape needs a word boundary before its marker, as
// `\b` does in a regexp.
var shapes = [...]shape{
	// OpenAI and Anthropic keys: sk-..., sk-proj-..., sk-ant-...
	{exact("sk-", 2), tokenRun(3, isTokenByte, 16, 0)},
	// Stripe secret and restricted keys.
	{exact("sk_live_", 2), tokenRun(8, isAlnum, 16, 0)},
	{exact("sk_test_", 2), tokenRun(8, isAlnum, 16, 0)},
	{exact("rk_live_", 2), tokenRun(8, isAlnum, 16, 0)},
	{exact("rk_test_", 2), tokenRun(8, isAlnum, 16, 0)},
	// GitHub tokens.
	{exact("ghp_", 3), tokenRun(4, isAlnum, 20, 0)},
	{exact("gho_", 3), tokenRun(4, isAlnum, 20, 0)},
	{exact("ghu_", 3), tokenRun(4, isAlnum, 20, 0)},
	{exact("ghs_", 3), tokenRun(4, isAlnum, 20, 0)},
	{exact("ghr_", 3), tokenRun(4, isAlnum, 20, 0)},
	{exact("github_pat_", 6), tokenRun(11, isWordByte, 20, 0)},
	// GitLab personal access tokens, npm and Hugging Face tokens.
	{exact("glpat-", 5), tokenRun(6, isTokenByte, 20, 0)},
	{exact("npm_", 3), tokenRun(4, isAlnum, 36, 0)},
	{exact("hf_", 2), tokenRun(3, isAlnum, 30, 0)},
	// AWS access key ids: exactly 16 more.
	{exact("AKIA", 1), tokenRun(4, isUpperOrDigit, 16, 16)},
	{exact("ASIA", 1), tokenRun(4, isUpperOrDigit, 16, 16)},
	// Google API keys (Gemini's): exactly 35 more.
	{exact("AIza", 3), tokenRun(4, isTokenByte, 35, 35)},
	// Slack tokens: xox[abposr]-...
	{exact("xox", 0), slackToken},
	// JWTs: a base64url header starting {" and up to two more parts.
	{exact("eyJ", 2), jwt},
	// HTTP credentials: what follows the scheme.
	{marker{text: "bearer", fold: true}, bearerCredential},
	{marker{text: "basic", fold: true}, basicCredential},
	// The password of a URL's user:password@, also with JSON's escaped
	// slashes (in a line that is not valid JSON the escapes are raw).
	{exact("://", 0), urlPassword(3)},
	{exact(`:\/\/`, 0), urlPassword(5)},
	// PEM private keys (RSA, EC, OpenSSH, PKCS#8, encrypted).
	{exact("-----BEGIN ", 0), pemPrivateKey},
}

// shapeIndex is shapes, indexed by anchor.
var shapeIndex = newMarkerIndex(shapeMarkers(shapes[:]))

func shapeMarkers(list []shape) []marker {
	ms := make([]marker, len(list))
	for i, sh := range list {
		ms[i] = sh.marker
	}
	return ms
}

// findShapes appends to dst the spans of s that are secrets by their
// shape, left to right, none overlapping.
func findShapes(s []byte, dst []span) []span { return findShapesOf(shapes[:], shapeIndex, s, dst) }

// findShapesOf is findShapes for the shapes of list, indexed by ix.
func findShapesOf(list []shape, ix *markerIndex, s []byte, dst []span) []span {
	var scan anchorScan
	pos := 0
	for k, which := scan.first(ix, s, 0); k >= 0; k, which = scan.first(ix, s, max(k+1, pos)) {
		for _, m := range ix.byAnchor[which] {
			start := k - list[m].anchor
			if start < pos || !ix.markerAt(s, start, m) {
				continue
			}
			if sp, ok := list[m].match(s, start); ok {
				dst = append(dst, sp)
				pos = max(sp.end, start+1)
				break
			}
		}
	}
	return dst
}

// markerIndex groups markers by their anchor byte.
type markerIndex struct {
	markers  []marker
	anchors  []byte  // the distinct anchor bytes (a folded marker's in both cases)
	byAnchor [][]int // for each anchor byte, the markers anchored on it
	// anchorOf is 1 + the index in anchors of each byte, 0 for a byte
	// that is no anchor.
	anchorOf [256]uint8
}

// maxAnchors bounds the distinct anchor bytes of an index.
const maxAnchors = 16

func newMarkerIndex(ms []marker) *markerIndex {
	ix := &markerIndex{markers: ms}
	add := func(b byte, m int) {
		i := bytes.IndexByte(ix.anchors, b)
		if i < 0 {
			ix.anchors = append(ix.anchors, b)
			ix.byAnchor = append(ix.byAnchor, nil)
			i = len(ix.anchors) - 1
			ix.anchorOf[b] = uint8(i + 1)
		}
		ix.byAnchor[i] = append(ix.byAnchor[i], m)
	}
	for m, mk := range ms {
		b := mk.text[mk.anchor]
		add(b, m)
		if mk.fold && isLower(b) {
			add(b-'a'+'A', m)
		}
	}
	if len(ix.anchors) > maxAnchors {
		panic("pipe: too many anchor bytes")
	}
	return ix
}

// markerAt reports whether marker m occurs at s[start:].
func (ix *markerIndex) markerAt(s []byte, start, m int) bool {
	mk := &ix.markers[m]
	if start < 0 || start+len(mk.text) > len(s) {
		return false
	}
	if mk.fold {
		return bytes.EqualFold(s[start:start+len(mk.text)], []byte(mk.text))
	}
	return string(s[start:start+len(mk.text)]) == mk.text
}

// anchorScan visits the anchor bytes of one text left to right. Where
// they are sparse (prose, code) it keeps the next occurrence of each,
// found by bytes.IndexByte, so the text is searched once per anchor byte;
// once they turn out dense (more than one in 32 bytes) it walks the rest
// byte by byte with a table, which costs the same for every byte.
type anchorScan struct {
	started bool
	dense   bool
	visits  int
	next    [maxAnchors]int // next occurrence at or after the last from; -1: none left
}

// first returns the leftmost occurrence of an anchor byte of ix in s at
// or after from, and which anchor it is; -1 when there is none. from
// never decreases from one call to the next.
func (a *anchorScan) first(ix *markerIndex, s []byte, from int) (pos, which int) {
	if !a.started {
		a.started = true
		for i := range ix.anchors {
			a.next[i] = -2
		}
	}
	a.visits++
	if !a.dense && a.visits > 64 && a.visits > from/32 {
		a.dense = true
	}
	if a.dense {
		for i := from; i < len(s); i++ {
			if w := ix.anchorOf[s[i]]; w != 0 {
				return i, int(w) - 1
			}
		}
		return -1, -1
	}
	pos, which = -1, -1
	for i, b := range ix.anchors {
		if n := a.next[i]; n == -2 || n >= 0 && n < from {
			a.next[i] = -1
			if from < len(s) {
				if k := bytes.IndexByte(s[from:], b); k >= 0 {
					a.next[i] = from + k
				}
			}
		}
		if n := a.next[i]; n >= 0 && (pos < 0 || n < pos) {
			pos, which = n, i
		}
	}
	return pos, which
}

// tokenRun matches a token: a word boundary before the marker, which is
// prefix bytes long, then at least minLen bytes of class (at most
// exactly bytes when exactly > 0: the token is that long).
func tokenRun(prefix int, class func(byte) bool, minLen, exactly int) func([]byte, int) (span, bool) {
	return func(s []byte, at int) (span, bool) {
		if !boundaryBefore(s, at) {
			return span{}, false
		}
		start := at + prefix
		limit := len(s)
		if exactly > 0 {
			limit = min(limit, start+exactly)
		}
		end := runEnd(s, start, limit, class)
		if end-start < minLen {
			return span{}, false
		}
		return span{at, end}, true
	}
}

// slackToken: xox[abposr]- and at least 10 of [A-Za-z0-9-].
func slackToken(s []byte, at int) (span, bool) {
	if !boundaryBefore(s, at) || at+4 >= len(s) || bytes.IndexByte([]byte("abposr"), s[at+3]) < 0 || s[at+4] != '-' {
		return span{}, false
	}
	end := runEnd(s, at+5, len(s), func(c byte) bool { return isAlnum(c) || c == '-' })
	if end-(at+5) < 10 {
		return span{}, false
	}
	return span{at, end}, true
}

// jwt: eyJ and at least 16 base64url bytes, then up to two more
// dot-separated base64url parts.
func jwt(s []byte, at int) (span, bool) {
	if !boundaryBefore(s, at) {
		return span{}, false
	}
	end := runEnd(s, at+3, len(s), isTokenByte)
	if end-(at+3) < 16 {
		return span{}, false
	}
	for range 2 {
		if end >= len(s) || s[end] != '.' {
			break
		}
		next := runEnd(s, end+1, len(s), isTokenByte)
		if next == end+1 {
			break
		}
		end = next
	}
	return span{at, end}, true
}

// bearerCredential: the token after the Bearer scheme, 8 bytes at least.
// A plain word after it is prose ("Bearer authentication") unless the
// scheme is a header's or a setting's value (after ':' or '=').
func bearerCredential(s []byte, at int) (span, bool) {
	start, ok := afterScheme(s, at, len("bearer"))
	if !ok {
		return span{}, false
	}
	end := runEnd(s, start, len(s), func(c byte) bool {
		return isAlnum(c) || bytes.IndexByte([]byte("._~+/=-"), c) >= 0
	})
	if end-start < 8 || plainWord(bytes.TrimRight(s[start:end], ".")) && !afterAssignment(s, at) {
		return span{}, false
	}
	return span{start, end}, true
}

// afterAssignment reports whether s[:at], spaces and quotes trimmed, ends
// in ':' or '=' (Authorization: Bearer x, auth="Bearer x").
func afterAssignment(s []byte, at int) bool {
	i := at
	for i > 0 && at-i < 8 && (isRegexpSpace(s[i-1]) || s[i-1] == '"' || s[i-1] == '\'' || s[i-1] == '\\') {
		i--
	}
	return i > 0 && (s[i-1] == ':' || s[i-1] == '=')
}

// basicCredential: the credential after the Basic scheme, base64 of
// "user:password" (it must decode to text with a colon, so that "Basic
// settings" is prose).
func basicCredential(s []byte, at int) (span, bool) {
	start, ok := afterScheme(s, at, len("basic"))
	if !ok {
		return span{}, false
	}
	end := runEnd(s, start, len(s), func(c byte) bool { return isAlnum(c) || c == '+' || c == '/' })
	for pad := 0; pad < 2 && end < len(s) && s[end] == '='; pad++ {
		end++
	}
	if end-start < 4 {
		return span{}, false
	}
	enc := base64.StdEncoding
	if (end-start)%4 != 0 {
		enc = base64.RawStdEncoding
	}
	var small [96]byte
	dec := small[:]
	if n := enc.DecodedLen(end - start); n > len(small) {
		dec = make([]byte, n)
	}
	n, err := enc.Decode(dec, s[start:end])
	if err != nil {
		return span{}, false
	}
	dec = dec[:n]
	if bytes.IndexByte(dec, ':') < 0 || !utf8.Valid(dec) || hasControl(dec) {
		return span{}, false
	}
	return span{start, end}, true
}

// afterScheme returns where the credential after an HTTP auth scheme of
// n bytes at s[at:] starts: the scheme is a word of its own, followed by
// white space.
func afterScheme(s []byte, at, n int) (int, bool) {
	if !boundaryBefore(s, at) {
		return 0, false
	}
	i := at + n
	if i >= len(s) || !isRegexpSpace(s[i]) {
		return 0, false
	}
	for i < len(s) && isRegexpSpace(s[i]) {
		i++
	}
	return i, true
}

// urlPassword matches the password of scheme://user:password@ at the
// separator ("://", or `:\/\/` of n bytes) at s[at:].
func urlPassword(n int) func([]byte, int) (span, bool) {
	return func(s []byte, at int) (span, bool) {
		// A scheme: letters, digits, + . -, with a letter (schemes are short).
		i, letter := at, false
		for i > 0 && at-i < 32 && isSchemeByte(s[i-1]) {
			i--
			letter = letter || isLetter(s[i])
		}
		if i == at || !letter {
			return span{}, false
		}
		u := runEnd(s, at+n, len(s), func(c byte) bool { return !isURLStop(c) && c != ':' })
		if u >= len(s) || s[u] != ':' {
			return span{}, false
		}
		inURL := func(c byte) bool { return !isURLStop(c) }
		p := runEnd(s, u+1, len(s), inURL)
		if p == u+1 || p >= len(s) || s[p] != '@' {
			return span{}, false
		}
		// The userinfo ends at the last '@' before the host, as a URL
		// parser reads it: "p@ss" is all password.
		for {
			q := runEnd(s, p+1, len(s), inURL)
			if q >= len(s) || s[q] != '@' {
				break
			}
			p = q
		}
		if string(s[u+1:p]) == RedactedText {
			return span{}, false
		}
		return span{u + 1, p}, true
	}
}

// pemPrivateKey: a PEM block whose label ends in PRIVATE KEY (or PRIVATE
// KEY BLOCK, an OpenPGP armored private key), up to its
// END line (a block cut off ends at the end of the text or at a quote,
// where a JSON string would end in a raw line). Where the block ends is
// found in one pass that stops at the first quote or END line: a search
// for either over the rest of the text would look at it again for every
// block (quadratic in a text of many blocks).
func pemPrivateKey(s []byte, at int) (span, bool) {
	i := at + len("-----BEGIN ")
	label := runEnd(s, i, min(len(s), i+64), func(c byte) bool { return isUpperOrDigit(c) || c == ' ' })
	name := s[i:label]
	private := bytes.HasSuffix(name, []byte("PRIVATE KEY")) || bytes.HasSuffix(name, []byte("PRIVATE KEY BLOCK")) // OpenPGP's armor
	if !private || !bytes.HasPrefix(s[label:], []byte("-----")) {
		return span{}, false
	}
	for j := label + len("-----"); ; {
		k := bytes.IndexAny(s[j:], `"-`)
		if k < 0 {
			return span{at, len(s)}, true
		}
		j += k
		if s[j] == '"' {
			return span{at, j}, true
		}
		if bytes.HasPrefix(s[j:], []byte("-----END ")) {
			e := j + len("-----END ")
			if d := bytes.Index(s[e:min(len(s), e+80)], []byte("-----")); d >= 0 {
				if q := bytes.IndexByte(s[e:e+d], '"'); q < 0 {
					return span{at, e + d + len("-----")}, true
				}
			}
			if q := bytes.IndexByte(s[e:min(len(s), e+80)], '"'); q >= 0 {
				return span{at, e + q}, true
			}
			return span{at, min(len(s), e+80)}, true
		}
		j++
	}
}

// runEnd returns the end of the run of class bytes in s[start:limit].
func runEnd(s []byte, start, limit int, class func(byte) bool) int {
	i := start
	for i < limit && class(s[i]) {
		i++
	}
	return i
}

// boundaryBefore reports whether s[at] starts a word (as `\b` before a
// word byte in a regexp).
func boundaryBefore(s []byte, at int) bool { return at == 0 || !isWordByte(s[at-1]) }

// plainWord reports whether w is a word of prose: letters, all lower case
// but perhaps the first.
func plainWord(w []byte) bool {
	if len(w) == 0 {
		return false
	}
	for i, c := range w {
		if !(isLower(c) || i == 0 && isUpper(c)) {
			return false
		}
	}
	return true
}

func hasControl(b []byte) bool {
	for _, c := range b {
		if c < 0x20 || c == 0x7f {
			return true
		}
	}
	return false
}

func isLower(c byte) bool        { return 'a' <= c && c <= 'z' }
func isUpper(c byte) bool        { return 'A' <= c && c <= 'Z' }
func isDigit(c byte) bool        { return '0' <= c && c <= '9' }
func isLetter(c byte) bool       { return isLower(c) || isUpper(c) }
func isAlnum(c byte) bool        { return isLetter(c) || isDigit(c) }
func isWordByte(c byte) bool     { return isAlnum(c) || c == '_' }
func isTokenByte(c byte) bool    { return isWordByte(c) || c == '-' }
func isUpperOrDigit(c byte) bool { return isUpper(c) || isDigit(c) }
func isSchemeByte(c byte) bool   { return isAlnum(c) || c == '+' || c == '.' || c == '-' }
func isRegexpSpace(c byte) bool  { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' }
func isURLStop(c byte) bool      { return isRegexpSpace(c) || c == '/' || c == '@' || c == '\\' || c == '"' }

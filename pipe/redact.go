package pipe

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
)

// Redacted is what a secret string value becomes in a capture (rule R2).
const Redacted = `"<redacted>"`

// secretWords are matched against object keys, lower-cased with '_', '-'
// and spaces removed.
var secretWords = [...]string{
	"apikey", "token", "secret", "password", "passwd", "pwd", "authorization", "cookie", "credential",
	"privatekey", "accesskey",
}

// maxEncodedDepth bounds how many times JSON encoded in a string value
// (Codex's "arguments") is decoded and redacted inside, one string in
// another: the work is at most this many passes over the frame. Deeper,
// the text rules still apply to the string.
const maxEncodedDepth = 8

// Redact returns frame with secrets replaced by "<redacted>" (rule R2):
// string values under keys that name a secret (see isSecretName; escapes
// in the key decoded), and the values of environment variables and
// headers (`env` and `headers` members, as in mcpServers[].env[] and
// headers[]). Inside every other string value: a value that is itself
// JSON is redacted the same way and encoded again; secret "key":"value"
// pairs of a JSON snippet and secrets of a known shape (tokens, Bearer
// and Basic credentials, URL passwords, PEM private keys) become
// <redacted>. Everything else keeps its exact bytes. A frame with nothing
// to redact, or that is not JSON, is returned as is (see RedactText).
//
// The walk is one pass with an explicit stack: its time is linear in the
// frame's size and no nesting depth can exhaust the goroutine stack. A
// string value is looked into only when a marker of what could be secret
// in it (a shape's prefix, an escaped quote, a \u escape) lies inside it;
// the markers are found with one bytes.Index pass each. The output is only
// allocated once a value is redacted.
func Redact(frame []byte) []byte {
	return redactJSON(frame, 0)
}

// redactJSON is Redact of a frame decoded from depth string values.
func redactJSON(frame []byte, depth int) []byte {
	rd := redactor{in: frame, depth: depth}
	if err := rd.walk(); err != nil || rd.out == nil {
		return frame
	}
	return append(rd.out, frame[rd.copied:]...)
}

// isSecretKey reports whether an object key (its raw bytes between the
// quotes) names a secret. Escapes are decoded first, so that
// "api\u005fkey" is the api_key it spells.
func isSecretKey(raw []byte) bool {
	if bytes.IndexByte(raw, '\\') >= 0 {
		var s string
		q := make([]byte, 0, len(raw)+2)
		if json.Unmarshal(append(append(append(q, '"'), raw...), '"'), &s) == nil {
			raw = []byte(s)
		}
	}
	return isSecretName(raw)
}

// isSecretName reports whether a name names a secret: it contains a
// secret word once lower-cased with '_', '-' and spaces removed, or it has
// "key" as a word (private_key, privateKey, X-Api-Key, KEY; not keyboard
// or monkey).
func isSecretName(name []byte) bool {
	if !isASCII(name) {
		// Unicode lower-casing can yield ASCII letters (U+212A KELVIN
		// SIGN is a 'k'): the general path.
		k := strings.NewReplacer("_", "", "-", "", " ", "").Replace(strings.ToLower(string(name)))
		return containsSecretWord([]byte(k)) || hasKeyWord(asciiLetters(string(name)))
	}
	var small [64]byte
	norm := small[:0]
	if len(name) > len(small) {
		norm = make([]byte, 0, len(name))
	}
	for _, c := range name {
		switch {
		case c == '_' || c == '-' || c == ' ':
			continue
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		}
		norm = append(norm, c)
	}
	return containsSecretWord(norm) || bytes.Contains(norm, []byte("key")) && hasKeyWord(name)
}

// containsSecretWord reports whether norm contains one of secretWords:
// one pass over norm, trying at each byte only the words that start with
// it.
func containsSecretWord(norm []byte) bool {
	for i, c := range norm {
		if bytes.IndexByte([]byte(secretInitials), c) < 0 {
			continue
		}
		rest := string(norm[i:])
		for _, w := range secretWords {
			if w[0] == c && strings.HasPrefix(rest, w) {
				return true
			}
		}
	}
	return false
}

// secretInitials are the first letters of secretWords.
const secretInitials = "atspc"

// hasKeyWord reports whether an ASCII name has "key" (any case) as one of
// its words: words are split at every byte that is not a letter or digit,
// between letters and digits, before an upper-case letter that follows a
// lower-case one (privateKey), and before the last of a run of upper-case
// letters that a lower-case one follows (APIKey).
func hasKeyWord(name []byte) bool {
	start := -1
	for i := 0; i <= len(name); i++ {
		var c byte
		if i < len(name) {
			c = name[i]
		}
		alnum := isAlnum(c)
		if start >= 0 && i > start {
			p := name[i-1]
			boundary := !alnum ||
				isDigit(c) != isDigit(p) ||
				isUpper(c) && isLower(p) ||
				isUpper(c) && isUpper(p) && i+1 < len(name) && isLower(name[i+1])
			if boundary {
				if i-start == 3 && bytes.EqualFold(name[start:i], []byte("key")) {
					return true
				}
				start = -1
			}
		}
		if alnum && start < 0 {
			start = i
		}
	}
	return false
}

// asciiLetters maps a name to ASCII for hasKeyWord: a letter whose lower
// case is ASCII becomes that letter (in its own case), every other rune a
// space.
func asciiLetters(name string) []byte {
	out := make([]byte, 0, len(name))
	for _, r := range name {
		l := unicode.ToLower(r)
		switch {
		case r < utf8.RuneSelf:
			out = append(out, byte(r))
		case l < utf8.RuneSelf && unicode.IsUpper(r):
			out = append(out, byte(unicode.ToUpper(l)))
		case l < utf8.RuneSelf:
			out = append(out, byte(l))
		default:
			out = append(out, ' ')
		}
	}
	return out
}

func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// redactor walks one frame. out stays nil until the first redaction; it
// then holds in[:copied] with the redactions made so far.
type redactor struct {
	in     []byte
	out    []byte
	copied int
	depth  int // how many string values in is was decoded from
	marks  stringMarks
	end    int // where the value walked ends
}

// container is an open object or array on the walk's stack. secret marks
// a container whose every string value is secret; env marks an object
// that is an environment variable or header entry (its "value" is
// secret), or an array of such entries (a string element is secret).
type container struct {
	object, secret, env bool
}

// redactString replaces the string in[start:end] by Redacted.
func (rd *redactor) redactString(start, end int) {
	rd.replace(start, end, []byte(Redacted))
}

// replace replaces in[start:end] by with.
func (rd *redactor) replace(start, end int, with []byte) {
	if rd.out == nil {
		rd.out = make([]byte, 0, len(rd.in))
	}
	rd.out = append(rd.out, rd.in[rd.copied:start]...)
	rd.out = append(rd.out, with...)
	rd.copied = end
}

// redactInside redacts what is secret inside the string value in[start:end]
// that no key made secret as a whole, if a marker says it may hold a
// secret.
func (rd *redactor) redactInside(start, end int) {
	if !rd.marks.within(rd.in, start, end) {
		return
	}
	if with := redactStringValue(rd.in[start:end], rd.depth); with != nil {
		rd.replace(start, end, with)
	}
}

// redactStringValue returns the raw JSON string value raw (quotes
// included) with its secrets redacted, or nil when it has none: a value
// that is a JSON text is redacted as a frame (up to maxEncodedDepth
// levels), any other by the text rules; a changed value is encoded again.
func redactStringValue(raw []byte, depth int) []byte {
	s := raw[1 : len(raw)-1]
	if bytes.IndexByte(s, '\\') >= 0 {
		dec, ok := rawjson.DecodeString(raw)
		if !ok {
			return nil
		}
		s = []byte(dec)
	}
	var out []byte
	if depth < maxEncodedDepth && looksLikeJSON(s) {
		inner := redactor{in: s, depth: depth + 1}
		if err := inner.walk(); err == nil && skipSpace(s, inner.end) == len(s) {
			if inner.out == nil {
				return nil
			}
			out = append(inner.out, s[inner.copied:]...)
		}
	}
	if out == nil {
		if out = redactTextBytes(s, depth+1); out == nil {
			return nil
		}
	}
	return rawjson.AppendString(make([]byte, 0, len(out)+len(out)/8+2), string(out))
}

// looksLikeJSON reports whether s, spaces trimmed, starts with { or [ and
// ends with } or ]: it may be a JSON text encoded in a string.
func looksLikeJSON(s []byte) bool {
	i, j := skipSpace(s, 0), len(s)
	for j > i && isSpace(s[j-1]) {
		j--
	}
	return j-i >= 2 && (s[i] == '{' || s[i] == '[') && (s[j-1] == '}' || s[j-1] == ']')
}

// stringMarks finds, for a frame, which string values may hold a secret
// that is not under a secret key: those with a shape's marker, an escaped
// quote (a JSON text or snippet) or a \u escape (which could spell a
// marker) inside. Its anchor scan goes once over the frame whatever the
// number of strings.
type stringMarks struct {
	scan anchorScan
}

// stringMarkIndex is the markers of stringMarks, indexed by anchor.
var stringMarkIndex = newMarkerIndex(append(shapeMarkers(shapes[:]), exact(`\"`, 0), exact(`\u`, 0)))

// within reports whether a marker occurs in b[start:end]; start never
// decreases from one call to the next.
func (m *stringMarks) within(b []byte, start, end int) bool {
	ix := stringMarkIndex
	for k, which := m.scan.first(ix, b, start); k >= 0 && k < end; k, which = m.scan.first(ix, b, k+1) {
		for _, mk := range ix.byAnchor[which] {
			if at := k - ix.markers[mk].anchor; at >= start && ix.markerAt(b, at, mk) {
				return true
			}
		}
	}
	return false
}

// walk visits every value of the frame once. For each value it knows
// whether a string there is secret (secret) and whether an object or
// array there holds environment variables or headers (env).
func (rd *redactor) walk() error {
	b := rd.in
	var stack []container
	i := skipSpace(b, 0)
	secret, env := false, false
	for {
		// A value starts at i.
		if i >= len(b) {
			return syntaxError(b, i, "missing value")
		}
		switch b[i] {
		case '{', '[':
			stack = append(stack, container{object: b[i] == '{', secret: secret, env: env})
			i++
		case '"':
			end, err := scanString(b, i)
			if err != nil {
				return err
			}
			if secret {
				rd.redactString(i, end)
			} else {
				rd.redactInside(i, end)
			}
			i = end
		default:
			end, err := skipValue(b, i)
			if err != nil {
				return err
			}
			i = end
		}
		// Find where the next value starts, closing containers on the way.
		for {
			if len(stack) == 0 {
				rd.end = i
				return nil
			}
			top := stack[len(stack)-1]
			j := skipSpace(b, i)
			if j >= len(b) {
				return syntaxError(b, j, "unterminated container")
			}
			if (top.object && b[j] == '}') || (!top.object && b[j] == ']') {
				stack = stack[:len(stack)-1]
				i = j + 1
				continue
			}
			if b[j] == ',' {
				j = skipSpace(b, j+1)
			}
			if !top.object {
				i = j
				isObject := j < len(b) && b[j] == '{'
				isString := j < len(b) && b[j] == '"'
				// An object in an env list is one variable; a string in
				// it is a value.
				secret, env = top.secret || (top.env && isString), top.env && isObject
				break
			}
			if j >= len(b) || b[j] != '"' {
				return syntaxError(b, j, "expected key")
			}
			kend, err := scanString(b, j)
			if err != nil {
				return err
			}
			key := b[j+1 : kend-1]
			v := skipSpace(b, kend)
			if v >= len(b) || b[v] != ':' {
				return syntaxError(b, v, "expected ':'")
			}
			v = skipSpace(b, v+1)
			secret = top.secret || isSecretKey(key) || (top.env && keyEqual(key, "value"))
			env = keyEqual(key, "env") || keyEqual(key, "headers")
			if env && v < len(b) && b[v] == '{' {
				// A map of variable names to values: every value is secret.
				secret = true
			}
			i = v
			break
		}
	}
}

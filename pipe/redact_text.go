package pipe

import (
	"bytes"
	"regexp"
	"strings"
)

// RedactedText is what a secret becomes inside a text: a non-JSON line, a
// frame that is not valid JSON, a stderr line or an argument.
const RedactedText = "<redacted>"

// tokenShapes are credentials recognisable by their shape alone, wherever
// they appear in a text: OpenAI and Anthropic keys (sk-..., sk-ant-...),
// GitHub tokens (ghp_, gho_, ghu_, ghs_, ghr_, github_pat_), AWS access key
// ids (AKIA..., ASIA...), Google API keys (AIza..., Gemini's), Slack tokens
// (xoxb-, xoxp-, xoxa-, xoxo-, xoxr-, xoxs-) and JWTs (eyJ...). Go's regexp runs in time linear in the text.
var tokenShapes = regexp.MustCompile(`\b(?:` +
	`sk-[A-Za-z0-9_-]{16,}` +
	`|gh[pousr]_[A-Za-z0-9]{20,}` +
	`|github_pat_[A-Za-z0-9_]{20,}` +
	`|(?:AKIA|ASIA)[0-9A-Z]{16}` +
	`|AIza[0-9A-Za-z_-]{35}` +
	`|xox[abposr]-[A-Za-z0-9-]{10,}` +
	`|eyJ[A-Za-z0-9_-]{16,}(?:\.[A-Za-z0-9_-]+){0,2}` +
	`)`)

// tokenMarkers are literals one of which every token shape contains: a
// text with none of them is not searched with the expression.
var tokenMarkers = [...]string{"sk-", "gh", "github_pat_", "AKIA", "ASIA", "AIza", "xox", "eyJ"}

// bearerToken is the credential after the HTTP Bearer scheme: "Bearer
// abc..." becomes "Bearer <redacted>" (8 characters at least, so that
// prose such as "Bearer tokens" is left alone).
var bearerToken = regexp.MustCompile(`(?i)\b(bearer)(\s+)[A-Za-z0-9._~+/=-]{8,}`)

// urlUserinfo is the password of a URL's user:password@ part.
var urlUserinfo = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.-]*://[^\s/:@]*:)[^\s/@]+@`)

// RedactText returns s with the secrets a text can be searched for
// replaced by <redacted>: well-known token shapes (see tokenShapes), the
// credentials after "Bearer",
// the password in a URL (scheme://user:password@), and the value of every
// `"key":"value"` pair whose key names a secret as in Redact (also when
// the value is cut off at the end of s). It is meant for lines that are
// not valid JSON: a frame cut off at EOF, a malformed frame, a non-JSON
// line, a stderr line. Its time is linear in len(s).
func RedactText(s string) string {
	out := redactPairs(s)
	if hasTokenMarker(out) {
		out = tokenShapes.ReplaceAllLiteralString(out, RedactedText)
	}
	if containsFold([]byte(out), "bearer") {
		out = bearerToken.ReplaceAllString(out, "${1}${2}"+RedactedText)
	}
	if strings.Contains(out, "://") {
		out = urlUserinfo.ReplaceAllString(out, "${1}"+RedactedText+"@")
	}
	return out
}

func hasTokenMarker(s string) bool {
	for _, m := range tokenMarkers {
		if strings.Contains(s, m) {
			return true
		}
	}
	return false
}

// redactPairs replaces the value of each `"key" : "value"` in s whose key
// names a secret. It walks the string literals of s once: a literal
// followed by ':' and another literal is a pair; a value with no closing
// quote runs to the end of s.
func redactPairs(s string) string {
	b := []byte(s)
	var out []byte
	copied := 0
	for i := 0; ; {
		k := bytes.IndexByte(b[i:], '"')
		if k < 0 {
			break
		}
		kstart := i + k
		kend, closed := textStringEnd(b, kstart)
		if !closed {
			break
		}
		v := skipSpace(b, kend)
		if v >= len(b) || b[v] != ':' {
			i = kend
			continue
		}
		v = skipSpace(b, v+1)
		if v >= len(b) || b[v] != '"' {
			i = v
			continue
		}
		vend, _ := textStringEnd(b, v)
		if isSecretKey(b[kstart+1 : kend-1]) {
			out = append(out, b[copied:v]...)
			out = append(out, Redacted...)
			copied = vend
		}
		i = vend
	}
	if out == nil {
		return s
	}
	return string(append(out, b[copied:]...))
}

// textStringEnd returns the offset just past the string literal starting at
// b[i] == '"', or len(b) and false when it has no closing quote.
func textStringEnd(b []byte, i int) (int, bool) {
	end, err := scanString(b, i)
	if err != nil {
		return len(b), false
	}
	return end, true
}

// containsFold reports whether b contains the ASCII word (lower case) in
// any letter case. Each case of the first letter is searched for once per
// occurrence, so the time is linear in len(b).
func containsFold(b []byte, word string) bool {
	lower, upper := word[0], word[0]
	if 'a' <= lower && lower <= 'z' {
		upper = lower - 'a' + 'A'
	}
	nextLower, nextUpper := -1, -1 // next occurrence at or after i; -2: none left
	for i := 0; i+len(word) <= len(b); {
		nextLower = nextAt(b, i, lower, nextLower)
		j := nextLower
		if upper != lower {
			nextUpper = nextAt(b, i, upper, nextUpper)
			if j == -2 || (nextUpper != -2 && nextUpper < j) {
				j = nextUpper
			}
		}
		if j == -2 || j+len(word) > len(b) {
			return false
		}
		if bytes.EqualFold(b[j:j+len(word)], []byte(word)) {
			return true
		}
		i = j + 1
	}
	return false
}

// nextAt returns the offset of the first c in b at or after i, given the
// last answer prev (reused while it is still ahead of i); -2 for none.
func nextAt(b []byte, i int, c byte, prev int) int {
	if prev == -2 || prev >= i {
		return prev
	}
	k := bytes.IndexByte(b[i:], c)
	if k < 0 {
		return -2
	}
	return i + k
}

// RedactArgs returns a copy of an agent's argv with secrets replaced by
// <redacted> (rule R2): the value of a flag whose name names a secret or
// ends in "key" (`--api-key X`, `--token=X`, `--key X`), the value of a
// header flag (`-H`/`--header "Authorization: Bearer X"` keeps the header
// name), an environment-style argument whose name names a secret or ends
// in KEY (`OPENAI_API_KEY=X`, `GH_TOKEN=X`), the password of a URL with
// user:password@, and anything RedactText finds (token shapes, Bearer).
func RedactArgs(argv []string) []string {
	out := make([]string, len(argv))
	copy(out, argv)
	for i := 0; i < len(out); i++ {
		a := out[i]
		if strings.HasPrefix(a, "-") && len(a) > 1 {
			name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
			switch {
			case isHeaderFlag(a):
				if hasValue {
					out[i] = a[:strings.Index(a, "=")+1] + redactHeader(value)
				} else if i+1 < len(out) {
					out[i+1] = redactHeader(out[i+1])
					i++
				}
				continue
			case isSecretArgName(name):
				if hasValue {
					out[i] = a[:strings.Index(a, "=")+1] + RedactedText
				} else if i+1 < len(out) {
					out[i+1] = RedactedText
					i++
				}
				continue
			}
		}
		if name, _, ok := strings.Cut(a, "="); ok && isEnvName(name) && isSecretArgName(name) {
			out[i] = name + "=" + RedactedText
			continue
		}
		out[i] = RedactText(a)
	}
	return out
}

// isSecretArgName reports whether a flag or variable name names a secret:
// a secret word, or a last word "key" (OPENAI_API_KEY, --key, NAME_KEY).
func isSecretArgName(name string) bool {
	if isSecretName([]byte(name)) {
		return true
	}
	lower := strings.ToLower(name)
	return lower == "key" || strings.HasSuffix(lower, "_key") || strings.HasSuffix(lower, "-key") ||
		strings.HasSuffix(lower, "apikey") || strings.HasSuffix(lower, "accesskey")
}

func isHeaderFlag(a string) bool {
	name, _, _ := strings.Cut(a, "=")
	return name == "-H" || name == "--header" || name == "--headers"
}

// redactHeader turns "Name: value" into "Name: <redacted>"; a value with
// no header name is redacted whole.
func redactHeader(h string) string {
	name, _, ok := strings.Cut(h, ":")
	if !ok {
		return RedactedText
	}
	return name + ": " + RedactedText
}

// isEnvName reports whether s looks like an environment variable name.
func isEnvName(s string) bool {
	if s == "" || ('0' <= s[0] && s[0] <= '9') {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}

package pipe

import (
	"bytes"
	"strings"
)

// RedactedText is what a secret becomes inside a text: a non-JSON line, a
// frame that is not valid JSON, a stderr line or an argument.
const RedactedText = "<redacted>"

// RedactText returns s with the secrets a text can be searched for
// replaced by <redacted>: the value of every `"key":"value"` pair whose key
// names a secret as in Redact (also when the value is cut off at the end
// of s), and the secrets of a known shape (see shapes: well-known token
// prefixes, the credentials after "Bearer" and "Basic", the password in a
// URL, PEM private keys). It is meant for lines that are not valid JSON:
// a frame cut off at EOF, a malformed frame, a non-JSON line, a stderr
// line. Its time is linear in len(s).
func RedactText(s string) string {
	if out := redactTextBytes([]byte(s)); out != nil {
		return string(out)
	}
	return s
}

// redactTextBytes is RedactText on bytes; it returns nil when nothing in s
// is secret.
func redactTextBytes(s []byte) []byte {
	out := redactPairs(s)
	text := s
	if out != nil {
		text = out
	}
	spans := findShapes(text, nil)
	if len(spans) == 0 {
		return out
	}
	red := make([]byte, 0, len(text))
	copied := 0
	for _, sp := range spans {
		red = append(append(red, text[copied:sp.start]...), RedactedText...)
		copied = sp.end
	}
	return append(red, text[copied:]...)
}

// redactPairs replaces the value of each `"key" : "value"` in s whose key
// names a secret. It walks the string literals of s once: a literal
// followed by ':' and another literal is a pair; a value with no closing
// quote runs to the end of s.
func redactPairs(b []byte) []byte {
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
		if string(b[v:vend]) != Redacted && isSecretKey(b[kstart+1:kend-1]) {
			out = append(out, b[copied:v]...)
			out = append(out, Redacted...)
			copied = vend
		}
		i = vend
	}
	if out == nil {
		return nil
	}
	return append(out, b[copied:]...)
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

package pipe

import (
	"bytes"
	"strings"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
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
//
// A text that is itself valid JSON (a structured stderr log line, a JSON
// argument) first gets the rules of a frame (Redact): only they know the
// values of env and headers entries.
func RedactText(s string) string {
	b := []byte(s)
	changed := false
	if looksLikeJSON(b) && validJSON(b) { // a cut-off frame fails the cheap test
		if red := Redact(b); !bytes.Equal(red, b) {
			b, changed = red, true
		}
	}
	if out := redactTextBytes(b, 0); out != nil {
		return string(out)
	}
	if changed {
		return string(b)
	}
	return s
}

// redactTextBytes is RedactText on bytes; it returns nil when nothing in s
// is secret. depth is how many string values s was decoded from.
func redactTextBytes(s []byte, depth int) []byte {
	out := redactPairs(s, depth)
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
// names a secret, and redacts inside every other string literal that is
// not a key and has an escape (see redactLiteral), as Redact does in a
// valid frame. It walks the string literals of s once: a literal followed
// by ':' and another literal is a pair; a literal with no closing quote
// runs to the end of s.
func redactPairs(b []byte, depth int) []byte {
	var out []byte
	copied := 0
	inside := func(start, end int, closed bool) {
		if with := redactLiteral(b[start:end], closed, depth); with != nil {
			out = append(out, b[copied:start]...)
			out = append(out, with...)
			copied = end
		}
	}
	for i := 0; ; {
		k := bytes.IndexByte(b[i:], '"')
		if k < 0 {
			break
		}
		kstart := i + k
		kend, closed := textStringEnd(b, kstart)
		if !closed {
			inside(kstart, kend, false) // a value cut off
			break
		}
		v := skipSpace(b, kend)
		if v >= len(b) || b[v] != ':' {
			inside(kstart, kend, true) // a value, not a key
			i = kend
			continue
		}
		v = skipSpace(b, v+1)
		if v >= len(b) || b[v] != '"' {
			i = v
			continue
		}
		vend, vclosed := textStringEnd(b, v)
		switch {
		case string(b[v:vend]) == Redacted:
		case isSecretKey(b[kstart+1 : kend-1]):
			out = append(out, b[copied:v]...)
			out = append(out, Redacted...)
			copied = vend
		default:
			inside(v, vend, vclosed)
		}
		i = vend
	}
	if out == nil {
		return nil
	}
	return append(out, b[copied:]...)
}

// redactLiteral returns a string literal of a text (quotes included; the
// closing one missing when !closed: the text was cut off in it) with the
// secrets inside it redacted as redactStringValue does, or nil when it
// has none. Only a literal with an escape is decoded: the text rules see
// the others' bytes as they are. A literal cut off in an escape loses
// that escape.
func redactLiteral(raw []byte, closed bool, depth int) []byte {
	if depth >= maxEncodedDepth || bytes.IndexByte(raw[1:], '\\') < 0 {
		return nil
	}
	if closed {
		return redactStringValue(raw, depth)
	}
	// Cut off: drop a dangling escape (at most `\uXXX`), close the
	// literal, and open it again after redacting.
	for cut := 0; cut <= 5 && cut < len(raw); cut++ {
		body := raw[:len(raw)-cut]
		quoted := append(bytes.Clone(body), '"')
		if _, ok := rawjson.DecodeString(quoted); !ok {
			continue
		}
		with := redactStringValue(quoted, depth)
		if with == nil {
			return nil
		}
		return with[:len(with)-1]
	}
	return nil
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

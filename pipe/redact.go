package pipe

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// Redacted is what a secret string value becomes in a capture (rule R2).
const Redacted = `"<redacted>"`

// secretWords are matched against object keys, lower-cased with '_', '-'
// and spaces removed.
var secretWords = [...]string{"apikey", "token", "secret", "password", "authorization", "cookie", "credential"}

// Redact returns frame with secrets replaced by "<redacted>" (rule R2):
// string values under keys that name an API key, token, secret, password,
// authorization, cookie or credential (any case, escapes in the key
// decoded), and the values of environment variables and headers (`env`
// and `headers` members, as in mcpServers[].env[] and headers[]).
// Everything else keeps its exact bytes. A frame with nothing to redact,
// or that is not JSON, is returned as is (see RedactText for those).
//
// The walk is one pass with an explicit stack: its time is linear in the
// frame's size and no nesting depth can exhaust the goroutine stack. The
// output is only allocated once a value is redacted.
func Redact(frame []byte) []byte {
	rd := redactor{in: frame}
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

// isSecretName reports whether a name contains a secret word once
// lower-cased with '_', '-' and spaces removed.
func isSecretName(name []byte) bool {
	if !isASCII(name) {
		// Unicode lower-casing can yield ASCII letters (U+212A KELVIN
		// SIGN is a 'k'): the general path.
		k := strings.NewReplacer("_", "", "-", "", " ", "").Replace(strings.ToLower(string(name)))
		return containsSecretWord([]byte(k))
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
	return containsSecretWord(norm)
}

func containsSecretWord(norm []byte) bool {
	for _, w := range secretWords {
		if bytes.Contains(norm, []byte(w)) {
			return true
		}
	}
	return false
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
	if rd.out == nil {
		rd.out = make([]byte, 0, len(rd.in))
	}
	rd.out = append(rd.out, rd.in[rd.copied:start]...)
	rd.out = append(rd.out, Redacted...)
	rd.copied = end
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

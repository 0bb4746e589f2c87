package pipe

// This file keeps the recursive redactor as it was before issue 8, as the
// reference the linear one is checked against (FuzzRedactMatchesRecursive).

import (
	"bytes"
	"strings"
)

// oldSecretWords are matched against object keys, lower-cased with '_', '-'
// and spaces removed.
var oldSecretWords = [...]string{"apikey", "token", "secret", "password", "authorization", "cookie", "credential"}

// oldPrefilterWords decide cheaply whether a frame needs a redaction walk.
var oldPrefilterWords = [...]string{"key", "token", "secret", "password", "authorization", "cookie", "credential", `"env"`, `"headers"`}

// Redact returns frame with secrets replaced by "<redacted>" (rule R2):
// string values under keys that name an API key, token, secret, password,
// authorization, cookie or credential (any case), and the values of
// environment variables and headers (`env` and `headers` members, as in
// mcpServers[].env[] and headers[]). Everything else keeps its exact bytes.
// A frame with nothing to redact, or that is not JSON, is returned as is.
func oldRedact(frame []byte) []byte {
	if !oldMayNeedRedaction(frame) {
		return frame
	}
	rd := oldRedactor{in: frame, out: make([]byte, 0, len(frame))}
	i := skipSpace(frame, 0)
	rd.out = append(rd.out, frame[:i]...)
	end, err := rd.value(i, false, false)
	if err != nil || !rd.changed {
		return frame
	}
	return append(rd.out, frame[end:]...)
}

func oldMayNeedRedaction(frame []byte) bool {
	for _, w := range oldPrefilterWords {
		if oldContainsFold(frame, w) {
			return true
		}
	}
	return false
}

// oldContainsFold reports whether b contains the ASCII word (lower case) in
// any letter case.
func oldContainsFold(b []byte, word string) bool {
	first := word[0]
	upper := first
	if 'a' <= first && first <= 'z' {
		upper = first - 'a' + 'A'
	}
	for i := 0; i+len(word) <= len(b); {
		j := bytes.IndexByte(b[i:], first)
		if upper != first {
			if k := bytes.IndexByte(b[i:], upper); k >= 0 && (j < 0 || k < j) {
				j = k
			}
		}
		if j < 0 {
			return false
		}
		i += j
		if i+len(word) <= len(b) && bytes.EqualFold(b[i:i+len(word)], []byte(word)) {
			return true
		}
		i++
	}
	return false
}

func oldIsSecretKey(raw []byte) bool {
	k := strings.NewReplacer("_", "", "-", "", " ", "").Replace(strings.ToLower(string(raw)))
	for _, w := range oldSecretWords {
		if strings.Contains(k, w) {
			return true
		}
	}
	return false
}

type oldRedactor struct {
	in      []byte
	out     []byte
	changed bool
}

// value copies the value at in[i:] to out, redacting strings when secret is
// set. envList marks an array (or object) of environment variables or
// headers, whose entries' values are secret.
func (rd *oldRedactor) value(i int, secret, envList bool) (int, error) {
	b := rd.in
	switch {
	case i < len(b) && b[i] == '"' && secret:
		end, err := scanString(b, i)
		if err != nil {
			return 0, err
		}
		rd.out = append(rd.out, Redacted...)
		rd.changed = true
		return end, nil
	case i < len(b) && b[i] == '{':
		return rd.object(i, secret, envList)
	case i < len(b) && b[i] == '[':
		return rd.array(i, secret, envList)
	default:
		end, err := skipValue(b, i)
		if err != nil {
			return 0, err
		}
		rd.out = append(rd.out, b[i:end]...)
		return end, nil
	}
}

func (rd *oldRedactor) object(i int, secret, envEntry bool) (int, error) {
	b := rd.in
	rd.out = append(rd.out, '{')
	i++
	for {
		j := skipSpace(b, i)
		if j >= len(b) {
			return 0, syntaxError(b, j, "unterminated object")
		}
		if b[j] == '}' {
			rd.out = append(rd.out, b[i:j+1]...)
			return j + 1, nil
		}
		if b[j] == ',' {
			j = skipSpace(b, j+1)
		}
		if j >= len(b) || b[j] != '"' {
			return 0, syntaxError(b, j, "expected key")
		}
		kend, err := scanString(b, j)
		if err != nil {
			return 0, err
		}
		key := b[j+1 : kend-1]
		v := skipSpace(b, kend)
		if v >= len(b) || b[v] != ':' {
			return 0, syntaxError(b, v, "expected ':'")
		}
		v = skipSpace(b, v+1)
		rd.out = append(rd.out, b[i:v]...)
		childSecret := secret || oldIsSecretKey(key) || (envEntry && keyEqual(key, "value"))
		childEnv := keyEqual(key, "env") || keyEqual(key, "headers")
		if childEnv && v < len(b) && b[v] == '{' {
			// A map of variable names to values: every value is secret.
			childSecret = true
		}
		end, err := rd.value(v, childSecret, childEnv)
		if err != nil {
			return 0, err
		}
		i = end
	}
}

func (rd *oldRedactor) array(i int, secret, envList bool) (int, error) {
	b := rd.in
	rd.out = append(rd.out, '[')
	i++
	for {
		j := skipSpace(b, i)
		if j >= len(b) {
			return 0, syntaxError(b, j, "unterminated array")
		}
		if b[j] == ']' {
			rd.out = append(rd.out, b[i:j+1]...)
			return j + 1, nil
		}
		if b[j] == ',' {
			j = skipSpace(b, j+1)
		}
		rd.out = append(rd.out, b[i:j]...)
		var end int
		var err error
		if envList && j < len(b) && b[j] == '{' {
			end, err = rd.object(j, secret, true)
		} else {
			end, err = rd.value(j, secret || (envList && j < len(b) && b[j] == '"'), false)
		}
		if err != nil {
			return 0, err
		}
		i = end
	}
}

package pipe

// This file keeps the recursive redactor the proxy had first as the
// reference the linear one is checked against (FuzzRedactMatchesRecursive).
// It shares the rules for a key (isSecretKey) and for what is inside a
// string value (redactStringValue) and differs in the walk: recursion
// instead of a stack, and every string value looked into, where the
// linear walk looks only into those a marker points at.

import "regexp"

// oldRedact returns frame with secrets replaced by "<redacted>" (rule R2),
// walking it recursively.
func oldRedact(frame []byte) []byte {
	rd := oldRedactor{in: frame, out: make([]byte, 0, len(frame))}
	i := skipSpace(frame, 0)
	rd.out = append(rd.out, frame[:i]...)
	end, err := rd.value(i, false, false)
	if err != nil || !rd.changed {
		return frame
	}
	return append(rd.out, frame[end:]...)
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
	case i < len(b) && b[i] == '"':
		end, err := scanString(b, i)
		if err != nil {
			return 0, err
		}
		if with := redactStringValue(b[i:end], 0); with != nil {
			rd.out = append(rd.out, with...)
			rd.changed = true
		} else {
			rd.out = append(rd.out, b[i:end]...)
		}
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
		childSecret := secret || isSecretKey(key) || (envEntry && keyEqual(key, "value"))
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

// The token shapes as regular expressions, as RedactText once searched for
// them (FuzzRedactShapesMatchRegexp checks the marker
// search against them).
var oldTokenShapes = regexp.MustCompile(`\b(?:` +
	`sk-[A-Za-z0-9_-]{16,}` +
	`|gh[pousr]_[A-Za-z0-9]{20,}` +
	`|github_pat_[A-Za-z0-9_]{20,}` +
	`|(?:AKIA|ASIA)[0-9A-Z]{16}` +
	`|AIza[0-9A-Za-z_-]{35}` +
	`|xox[abposr]-[A-Za-z0-9-]{10,}` +
	`|eyJ[A-Za-z0-9_-]{16,}(?:\.[A-Za-z0-9_-]+){0,2}` +
	`)`)

// oldTokenShapeList is the part of shapes that oldTokenShapes spells.
func oldTokenShapeList() []shape {
	var list []shape
	for _, sh := range shapes {
		switch sh.text {
		case "sk-", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "AKIA", "ASIA", "AIza", "xox", "eyJ":
			list = append(list, sh)
		}
	}
	return list
}

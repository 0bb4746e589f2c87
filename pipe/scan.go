package pipe

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// ErrSyntax reports JSON the scanner could not walk.
var ErrSyntax = errors.New("pipe: malformed JSON")

func syntaxError(b []byte, i int, what string) error {
	return fmt.Errorf("%w: %s at offset %d of %d", ErrSyntax, what, i, len(b))
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// scanString expects b[i] == '"' and returns the offset just past the
// closing quote.
func scanString(b []byte, i int) (int, error) {
	j := i + 1
	for {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return 0, syntaxError(b, i, "unterminated string")
		}
		q := j + k
		// Count the backslashes right before the quote: an odd count escapes it.
		n := 0
		for p := q - 1; p > i && b[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return q + 1, nil
		}
		j = q + 1
	}
}

// skipValue returns the offset just past the JSON value starting at b[i]
// (whitespace before it must already be skipped). Containers are walked
// by bracket depth; scalars up to the next delimiter. It does not fully
// validate JSON: it finds boundaries.
func skipValue(b []byte, i int) (int, error) {
	if i >= len(b) {
		return 0, syntaxError(b, i, "missing value")
	}
	switch b[i] {
	case '"':
		return scanString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				end, err := scanString(b, j)
				if err != nil {
					return 0, err
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, nil
				}
			}
		}
		return 0, syntaxError(b, i, "unterminated container")
	default:
		j := i
		for j < len(b) {
			c := b[j]
			if c == ',' || c == '}' || c == ']' || isSpace(c) {
				break
			}
			j++
		}
		if j == i {
			return 0, syntaxError(b, i, "unexpected byte")
		}
		return j, nil
	}
}

// Member is one member of a JSON object, as found by Members.
type Member struct {
	// Key is the key's raw bytes between the quotes, escapes not decoded.
	Key []byte
	// Value is the value's raw bytes.
	Value []byte
	// KeyStart is the offset of the key's opening quote in the object;
	// ValueStart and ValueEnd delimit Value in the object.
	KeyStart, ValueStart, ValueEnd int
}

// KeyIs reports whether the member's key equals name, decoding escapes when
// the raw key has any.
func (m Member) KeyIs(name string) bool { return keyEqual(m.Key, name) }

func keyEqual(raw []byte, name string) bool {
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw) == name
	}
	var s string
	q := make([]byte, 0, len(raw)+2)
	q = append(append(append(q, '"'), raw...), '"')
	if json.Unmarshal(q, &s) != nil {
		return false
	}
	return s == name
}

// objectIter walks the members of an object without allocating.
type objectIter struct {
	b     []byte
	i     int
	first bool
	err   error
}

func newObjectIter(obj []byte) (objectIter, error) {
	i := skipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return objectIter{}, syntaxError(obj, i, "not an object")
	}
	return objectIter{b: obj, i: i + 1, first: true}, nil
}

// next returns the next member; ok is false at the end of the object or on
// error (then it.err is set).
func (it *objectIter) next() (m Member, ok bool) {
	b := it.b
	i := skipSpace(b, it.i)
	if i >= len(b) {
		it.err = syntaxError(b, i, "unterminated object")
		return m, false
	}
	if b[i] == '}' {
		it.i = i + 1
		return m, false
	}
	if !it.first {
		if b[i] != ',' {
			it.err = syntaxError(b, i, "expected ',' in object")
			return m, false
		}
		i = skipSpace(b, i+1)
	}
	it.first = false
	if i >= len(b) || b[i] != '"' {
		it.err = syntaxError(b, i, "expected key")
		return m, false
	}
	kend, err := scanString(b, i)
	if err != nil {
		it.err = err
		return m, false
	}
	m.KeyStart = i
	m.Key = b[i+1 : kend-1]
	i = skipSpace(b, kend)
	if i >= len(b) || b[i] != ':' {
		it.err = syntaxError(b, i, "expected ':'")
		return m, false
	}
	i = skipSpace(b, i+1)
	vend, err := skipValue(b, i)
	if err != nil {
		it.err = err
		return m, false
	}
	m.ValueStart, m.ValueEnd = i, vend
	m.Value = b[i:vend]
	it.i = vend
	return m, true
}

// Members calls fn for each member of the JSON object obj, in order, until fn
// returns false. Values are not decoded.
func Members(obj []byte, fn func(Member) bool) error {
	it, err := newObjectIter(obj)
	if err != nil {
		return err
	}
	for {
		m, ok := it.next()
		if !ok {
			return it.err
		}
		if !fn(m) {
			return nil
		}
	}
}

// Elements calls fn for each element of the JSON array arr, in order, until
// fn returns false.
func Elements(arr []byte, fn func(value []byte) bool) error {
	i := skipSpace(arr, 0)
	if i >= len(arr) || arr[i] != '[' {
		return syntaxError(arr, i, "not an array")
	}
	i = skipSpace(arr, i+1)
	if i < len(arr) && arr[i] == ']' {
		return nil
	}
	for {
		i = skipSpace(arr, i)
		end, err := skipValue(arr, i)
		if err != nil {
			return err
		}
		if !fn(arr[i:end]) {
			return nil
		}
		i = skipSpace(arr, end)
		if i >= len(arr) {
			return syntaxError(arr, i, "unterminated array")
		}
		switch arr[i] {
		case ']':
			return nil
		case ',':
			i++
		default:
			return syntaxError(arr, i, "expected ',' in array")
		}
	}
}

// Lookup returns the raw bytes of the value at path inside the JSON object
// obj, where each path element is an object key. The last member with a
// key wins, as in encoding/json.
func Lookup(obj []byte, path ...string) ([]byte, bool) {
	cur := obj
	for _, key := range path {
		it, err := newObjectIter(cur)
		if err != nil {
			return nil, false
		}
		var found []byte
		for {
			m, ok := it.next()
			if !ok {
				break
			}
			if keyEqual(m.Key, key) {
				found = m.Value
			}
		}
		if it.err != nil || found == nil {
			return nil, false
		}
		cur = found
	}
	return cur, true
}

// LookupString returns the string at path, decoded.
func LookupString(obj []byte, path ...string) (string, bool) {
	v, ok := Lookup(obj, path...)
	if !ok || len(v) == 0 || v[0] != '"' {
		return "", false
	}
	if bytes.IndexByte(v, '\\') < 0 {
		return string(v[1 : len(v)-1]), true
	}
	var s string
	if json.Unmarshal(v, &s) != nil {
		return "", false
	}
	return s, true
}

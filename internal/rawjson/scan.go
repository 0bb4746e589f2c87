package rawjson

import (
	"bytes"
	"errors"
	"fmt"
)

// ErrSyntax reports JSON the scanner could not walk.
var ErrSyntax = errors.New("rawjson: malformed JSON")

// SyntaxError returns an ErrSyntax for b at offset i.
func SyntaxError(b []byte, i int, what string) error {
	return fmt.Errorf("%w: %s at offset %d of %d", ErrSyntax, what, i, len(b))
}

// IsSpace reports whether c is JSON white space.
func IsSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// SkipSpace returns the offset of the first non-blank byte of b at or
// after i.
func SkipSpace(b []byte, i int) int {
	for i < len(b) && IsSpace(b[i]) {
		i++
	}
	return i
}

// ScanString expects b[i] == '"' and returns the offset just past the
// closing quote.
func ScanString(b []byte, i int) (int, error) {
	j := i + 1
	for {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return 0, SyntaxError(b, i, "unterminated string")
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

// SkipValue returns the offset just past the JSON value starting at b[i]
// (whitespace before it must already be skipped). Containers are walked
// by bracket depth; scalars up to the next delimiter. It does not fully
// validate JSON: it finds boundaries (a scalar ends at the first
// structural byte or blank).
func SkipValue(b []byte, i int) (int, error) {
	if i >= len(b) {
		return 0, SyntaxError(b, i, "missing value")
	}
	switch b[i] {
	case '"':
		return ScanString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				end, err := ScanString(b, j)
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
		return 0, SyntaxError(b, i, "unterminated container")
	default:
		j := i
		for j < len(b) {
			c := b[j]
			// Any structural byte ends it: "0{" or `0"` is a scalar
			// followed by a syntax error, as a bracket count sees it.
			if c == ',' || c == '}' || c == ']' || c == '"' || c == '{' || c == '[' || c == ':' || IsSpace(c) {
				break
			}
			j++
		}
		if j == i {
			return 0, SyntaxError(b, i, "unexpected byte")
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
func (m Member) KeyIs(name string) bool { return KeyEqual(m.Key, name) }

// KeyEqual reports whether the raw key (the bytes between its quotes)
// equals name once its escapes are decoded.
func KeyEqual(raw []byte, name string) bool {
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw) == name
	}
	s, ok := UnescapeKey(raw)
	return ok && s == name
}

// ObjectIter walks the members of an object without allocating.
type ObjectIter struct {
	b     []byte
	i     int
	first bool
	err   error
}

// NewObjectIter starts walking the object obj.
func NewObjectIter(obj []byte) (ObjectIter, error) {
	i := SkipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return ObjectIter{}, SyntaxError(obj, i, "not an object")
	}
	return ObjectIter{b: obj, i: i + 1, first: true}, nil
}

// Next returns the next member; ok is false at the end of the object or
// on error (then Err says which).
func (it *ObjectIter) Next() (m Member, ok bool) {
	if m, ok = it.key(); !ok {
		return m, false
	}
	vend, err := SkipValue(it.b, m.ValueStart)
	if err != nil {
		it.err = err
		return m, false
	}
	it.valueEnds(&m, vend)
	return m, true
}

// key reads the next member up to the start of its value (m.ValueStart);
// the caller finds where the value ends and calls valueEnds.
func (it *ObjectIter) key() (m Member, ok bool) {
	b := it.b
	i := SkipSpace(b, it.i)
	if i >= len(b) {
		it.err = SyntaxError(b, i, "unterminated object")
		return m, false
	}
	if b[i] == '}' {
		it.i = i + 1
		return m, false
	}
	if !it.first {
		if b[i] != ',' {
			it.err = SyntaxError(b, i, "expected ',' in object")
			return m, false
		}
		i = SkipSpace(b, i+1)
	}
	it.first = false
	if i >= len(b) || b[i] != '"' {
		it.err = SyntaxError(b, i, "expected key")
		return m, false
	}
	kend, err := ScanString(b, i)
	if err != nil {
		it.err = err
		return m, false
	}
	m.KeyStart = i
	m.Key = b[i+1 : kend-1]
	i = SkipSpace(b, kend)
	if i >= len(b) || b[i] != ':' {
		it.err = SyntaxError(b, i, "expected ':'")
		return m, false
	}
	m.ValueStart = SkipSpace(b, i+1)
	return m, true
}

// valueEnds completes m, whose value ends at vend, and moves past it.
func (it *ObjectIter) valueEnds(m *Member, vend int) {
	m.ValueEnd = vend
	m.Value = it.b[m.ValueStart:vend]
	it.i = vend
}

// Err is the error that ended the walk, or nil.
func (it *ObjectIter) Err() error { return it.err }

// Offset is the offset just past the last member or closing brace read.
func (it *ObjectIter) Offset() int { return it.i }

// Members calls fn for each member of the JSON object obj, in order, until fn
// returns false. Values are not decoded.
func Members(obj []byte, fn func(Member) bool) error {
	it, err := NewObjectIter(obj)
	if err != nil {
		return err
	}
	for {
		m, ok := it.Next()
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
	i := SkipSpace(arr, 0)
	if i >= len(arr) || arr[i] != '[' {
		return SyntaxError(arr, i, "not an array")
	}
	i = SkipSpace(arr, i+1)
	if i < len(arr) && arr[i] == ']' {
		return nil
	}
	for {
		i = SkipSpace(arr, i)
		end, err := SkipValue(arr, i)
		if err != nil {
			return err
		}
		if !fn(arr[i:end]) {
			return nil
		}
		i = SkipSpace(arr, end)
		if i >= len(arr) {
			return SyntaxError(arr, i, "unterminated array")
		}
		switch arr[i] {
		case ']':
			return nil
		case ',':
			i++
		default:
			return SyntaxError(arr, i, "expected ',' in array")
		}
	}
}

// Lookup returns the raw bytes of the value at path inside the JSON object
// obj, where each path element is an object key. The last member with a
// key wins, as in encoding/json.
func Lookup(obj []byte, path ...string) ([]byte, bool) {
	cur := obj
	for _, key := range path {
		it, err := NewObjectIter(cur)
		if err != nil {
			return nil, false
		}
		var found []byte
		for {
			m, ok := it.Next()
			if !ok {
				break
			}
			if KeyEqual(m.Key, key) {
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
	if !ok {
		return "", false
	}
	return DecodeString(v)
}

// pick sets vals[i] to m's value for each keys[i] that m's key equals
// (a later member of the same name replaces an earlier one).
func (m *Member) pick(keys []string, vals [][]byte) {
	for i, k := range keys {
		if KeyEqual(m.Key, k) {
			vals[i] = m.Value
		}
	}
}

// pickAll walks it to the end of its object, picking keys into vals as
// m.pick does; it returns the walk's error.
func pickAll(it *ObjectIter, keys []string, vals [][]byte) error {
	for {
		m, ok := it.Next()
		if !ok {
			return it.err
		}
		m.pick(keys, vals)
	}
}

// Pick reads several members of the JSON object obj in one walk: vals[i]
// becomes the raw value of the member whose key is keys[i] (the last one,
// as in Lookup), or nil when obj has none. A module that needs several
// members of a frame with a large value (a 5 MB file read in a tool call's
// content) skips that value once, not once per member. vals must be at
// least as long as keys; it is cleared first. An error (obj is no object,
// or malformed) leaves vals all nil.
func Pick(obj []byte, keys []string, vals [][]byte) error {
	vals = vals[:len(keys)]
	clear(vals)
	it, err := NewObjectIter(obj)
	if err != nil {
		return err
	}
	if err := pickAll(&it, keys, vals); err != nil {
		clear(vals)
		return err
	}
	return nil
}

// PickIn is Pick over obj that also reads the members innerKeys of the
// object value of obj's member inner into innerVals, in the same walk:
// that object is walked once, not skipped and then walked again (a
// session/update's params and its update, whose content can be
// megabytes). The last member named inner wins, as in Pick; innerVals are
// all nil when it is absent or no object. An error leaves every value nil.
func PickIn(obj []byte, keys []string, vals [][]byte, inner string, innerKeys []string, innerVals [][]byte) error {
	vals, innerVals = vals[:len(keys)], innerVals[:len(innerKeys)]
	clear(vals)
	clear(innerVals)
	fail := func(err error) error {
		clear(vals)
		clear(innerVals)
		return err
	}
	it, err := NewObjectIter(obj)
	if err != nil {
		return fail(err)
	}
	for {
		m, ok := it.key()
		if !ok {
			break
		}
		isInner := KeyEqual(m.Key, inner)
		var vend int
		if isInner && m.ValueStart < len(obj) && obj[m.ValueStart] == '{' {
			clear(innerVals) // an earlier member of that name is replaced
			sub := ObjectIter{b: obj, i: m.ValueStart + 1, first: true}
			if err := pickAll(&sub, innerKeys, innerVals); err != nil {
				return fail(err)
			}
			vend = sub.i
		} else {
			if vend, err = SkipValue(obj, m.ValueStart); err != nil {
				return fail(err)
			}
			if isInner {
				clear(innerVals)
			}
		}
		it.valueEnds(&m, vend)
		m.pick(keys, vals)
	}
	if it.err != nil {
		return fail(it.err)
	}
	return nil
}

package rawjson

import (
	"bytes"
	"fmt"
	"slices"
)

// Set returns a copy of the JSON object obj with the member at path set to
// the raw JSON value. Missing objects along the path are created; an
// existing member's value is replaced in place. Every other byte of obj is
// kept as it was (key order, spacing, escapes), so a vendor frame changed
// by Set differs from the original only where it was changed. The result
// is built in one copy, however deep the path.
func Set(obj []byte, value []byte, path ...string) ([]byte, error) {
	return SetAll(obj, Edit{Path: path, Value: value})
}

// Edit sets the member at Path to the raw JSON Value.
type Edit struct {
	Path  []string
	Value []byte
}

// SetAll applies several edits to obj in one copy, each as Set would; the
// edits must not overlap (one's path a prefix of another's). Members that
// several edits add to one object are added in the order of the edits.
func SetAll(obj []byte, edits ...Edit) ([]byte, error) {
	splices := make([]splice, 0, len(edits))
	size := len(obj)
	for i, e := range edits {
		sp, err := locate(obj, e.Value, e.Path)
		if err != nil {
			return nil, err
		}
		sp.order = i
		splices = append(splices, sp)
		size += len(sp.key) + len(sp.value) + len(sp.prefix) + len(sp.suffix) + 2
	}
	slices.SortStableFunc(splices, func(a, b splice) int { return a.start - b.start })
	for i := 1; i < len(splices); i++ {
		if splices[i].start < splices[i-1].end {
			return nil, fmt.Errorf("set: overlapping edits %v and %v", edits[splices[i-1].order].Path, edits[splices[i].order].Path)
		}
	}
	out := make([]byte, 0, size)
	at := 0
	for i, sp := range splices {
		out = append(out, obj[at:sp.start]...)
		if sp.insert {
			// A member added after a member (or after one added just
			// before it, at the same place) is preceded by a comma.
			if !sp.empty || (i > 0 && splices[i-1].insert && splices[i-1].start == sp.start) {
				out = append(out, ',')
			}
			out = append(out, sp.key...)
			out = append(out, ':')
			out = append(out, sp.prefix...)
			out = append(out, sp.value...)
			out = append(out, sp.suffix...)
		} else {
			out = append(out, sp.value...)
		}
		at = sp.end
	}
	return append(out, obj[at:]...), nil
}

// splice replaces obj[start:end] by value, or inserts a member (key,
// value wrapped in prefix and suffix) at start.
type splice struct {
	start, end     int
	value          []byte
	insert, empty  bool   // a new member; the object had none
	key            []byte // the new member's quoted key
	prefix, suffix []byte // objects around value for the missing path
	order          int
}

// locate finds where setting path to value changes obj.
func locate(obj, value []byte, path []string) (splice, error) {
	if len(path) == 0 {
		return splice{start: 0, end: len(obj), value: value}, nil
	}
	cur, base := obj, 0
	for i, key := range path {
		var target Member
		found, empty := false, true
		err := Members(cur, func(m Member) bool {
			empty = false
			if m.KeyIs(key) {
				target, found = m, true // the last duplicate wins, as in encoding/json
			}
			return true
		})
		if err != nil {
			return splice{}, fmt.Errorf("set %v: %w", path, err)
		}
		if !found {
			end := bytes.LastIndexByte(cur, '}')
			if end < 0 {
				return splice{}, fmt.Errorf("set %v: not an object", path)
			}
			prefix, suffix := nestAround(path[i+1:])
			return splice{start: base + end, end: base + end, insert: true, empty: empty,
				key: Text(key), value: value, prefix: prefix, suffix: suffix}, nil
		}
		if i == len(path)-1 {
			return splice{start: base + target.ValueStart, end: base + target.ValueEnd, value: value}, nil
		}
		if FirstByte(target.Value) != '{' {
			return splice{}, fmt.Errorf("set %v: %q is not an object", path, key)
		}
		base += target.ValueStart
		cur = target.Value
	}
	panic("unreachable")
}

// nestAround returns what goes before and after a value to nest it in
// objects {"path[0]": {"path[1]": ... value}}.
func nestAround(path []string) (prefix, suffix []byte) {
	for _, key := range path {
		prefix = append(prefix, '{')
		prefix = AppendString(prefix, key)
		prefix = append(prefix, ':')
		suffix = append(suffix, '}')
	}
	return prefix, suffix
}

// Delete returns a copy of obj without the member at path (every
// duplicate of its last key), keeping every other byte; obj itself when
// there is nothing to delete.
func Delete(obj []byte, path ...string) ([]byte, error) {
	if len(path) == 0 {
		return obj, nil
	}
	if len(path) > 1 {
		inner, ok := Lookup(obj, path[0])
		if !ok || FirstByte(inner) != '{' {
			return obj, nil
		}
		changed, err := Delete(inner, path[1:]...)
		if err != nil {
			return nil, err
		}
		if bytes.Equal(changed, inner) {
			return obj, nil
		}
		return Set(obj, changed, path[0])
	}
	var members []Member
	deleted := 0
	err := Members(obj, func(m Member) bool {
		members = append(members, m)
		if m.KeyIs(path[0]) {
			deleted++
		}
		return true
	})
	if err != nil {
		return nil, fmt.Errorf("delete %v: %w", path, err)
	}
	if deleted == 0 {
		return obj, nil
	}
	// Rebuild from the kept members: each keeps the separator that stood
	// before it, except the first kept one, which takes the place of the
	// first member.
	first, last := members[0], members[len(members)-1]
	out := make([]byte, 0, len(obj))
	out = append(out, obj[:first.KeyStart]...)
	kept := 0
	for i, m := range members {
		if m.KeyIs(path[0]) {
			continue
		}
		if kept > 0 {
			out = append(out, obj[members[i-1].ValueEnd:m.KeyStart]...)
		}
		out = append(out, obj[m.KeyStart:m.ValueEnd]...)
		kept++
	}
	return append(out, obj[last.ValueEnd:]...), nil
}

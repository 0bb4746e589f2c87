package rawjson

import (
	"bytes"
	"fmt"
)

// Set returns a copy of the JSON object obj with the member at path set to
// the raw JSON value. Missing objects along the path are created; an
// existing member's value is replaced in place. Every other byte of obj is
// kept as it was (key order, spacing, escapes), so a vendor frame changed
// by Set differs from the original only where it was changed.
func Set(obj []byte, value []byte, path ...string) ([]byte, error) {
	if len(path) == 0 {
		return append([]byte(nil), value...), nil
	}
	var target Member
	found := false
	err := Members(obj, func(m Member) bool {
		if m.KeyIs(path[0]) {
			target, found = m, true // the last duplicate wins, as in encoding/json
		}
		return true
	})
	if err != nil {
		return nil, fmt.Errorf("set %v: %w", path, err)
	}
	if found {
		inner := value
		if len(path) > 1 {
			if FirstByte(target.Value) != '{' {
				return nil, fmt.Errorf("set %v: %q is not an object", path, path[0])
			}
			inner, err = Set(target.Value, value, path[1:]...)
			if err != nil {
				return nil, err
			}
		}
		out := make([]byte, 0, len(obj)-len(target.Value)+len(inner))
		out = append(out, obj[:target.ValueStart]...)
		out = append(out, inner...)
		return append(out, obj[target.ValueEnd:]...), nil
	}
	// Build the missing member {"path[0]": {"path[1]": ... value}} and
	// insert it before the closing brace.
	member, err := nest(value, path[1:])
	if err != nil {
		return nil, err
	}
	key := Text(path[0])
	end := bytes.LastIndexByte(obj, '}')
	if end < 0 {
		return nil, fmt.Errorf("set %v: not an object", path)
	}
	empty := true
	_ = Members(obj, func(Member) bool { empty = false; return false })
	out := make([]byte, 0, len(obj)+len(key)+len(member)+2)
	out = append(out, obj[:end]...)
	if !empty {
		out = append(out, ',')
	}
	out = append(out, key...)
	out = append(out, ':')
	out = append(out, member...)
	return append(out, obj[end:]...), nil
}

func nest(value []byte, path []string) ([]byte, error) {
	if len(path) == 0 {
		return value, nil
	}
	inner, err := nest(value, path[1:])
	if err != nil {
		return nil, err
	}
	key := Text(path[0])
	out := make([]byte, 0, len(key)+len(inner)+3)
	out = append(out, '{')
	out = append(out, key...)
	out = append(out, ':')
	out = append(out, inner...)
	return append(out, '}'), nil
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

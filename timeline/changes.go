package timeline

import (
	"bytes"
	"encoding/json"
	"reflect"
	"sort"
	"strconv"
	"strings"
)

// fieldChange is one difference between two JSON values at a path.
type fieldChange struct {
	// op is '+' (added), '-' (removed) or '~' (changed).
	op       byte
	path     string
	old, new any
}

// fieldChanges lists how JSON b differs from JSON a, member by member, in
// path order. Arrays of different lengths are reported as one change.
// It returns nil when either does not decode.
func fieldChanges(a, b []byte) []fieldChange {
	va, okA := decode(a)
	vb, okB := decode(b)
	if !okA || !okB {
		return nil
	}
	var out []fieldChange
	walkChanges("", va, vb, &out)
	return out
}

func decode(b []byte) (any, bool) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil, false
	}
	return v, true
}

func walkChanges(path string, a, b any, out *[]fieldChange) {
	switch ta := a.(type) {
	case map[string]any:
		tb, ok := b.(map[string]any)
		if !ok {
			break
		}
		keys := make([]string, 0, len(ta)+len(tb))
		for k := range ta {
			keys = append(keys, k)
		}
		for k := range tb {
			if _, dup := ta[k]; !dup {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			va, inA := ta[k]
			vb, inB := tb[k]
			p := joinPath(path, k)
			switch {
			case !inA:
				*out = append(*out, fieldChange{op: '+', path: p, new: vb})
			case !inB:
				*out = append(*out, fieldChange{op: '-', path: p, old: va})
			default:
				walkChanges(p, va, vb, out)
			}
		}
		return
	case []any:
		tb, ok := b.([]any)
		if !ok || len(ta) != len(tb) {
			break
		}
		for i := range ta {
			walkChanges(path+"["+strconv.Itoa(i)+"]", ta[i], tb[i], out)
		}
		return
	}
	if !reflect.DeepEqual(a, b) {
		*out = append(*out, fieldChange{op: '~', path: path, old: a, new: b})
	}
}

// joinPath appends key to a dotted path, quoting keys that would make
// the path ambiguous.
func joinPath(path, key string) string {
	if key == "" || strings.ContainsAny(key, `.[]" `) {
		key = strconv.Quote(key)
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

// String renders the change with values cut to limit characters.
func (c fieldChange) render(limit int) string {
	switch c.op {
	case '+':
		return "+ " + c.path + " = " + oneLine(compact(c.new), limit)
	case '-':
		return "- " + c.path + " (was " + oneLine(compact(c.old), limit) + ")"
	}
	return "~ " + c.path + ": " + oneLine(compact(c.old), limit) + " → " + oneLine(compact(c.new), limit)
}

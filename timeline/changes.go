package timeline

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
	"github.com/acp-normalize/acp-normalize/internal/terminal"
)

// fieldChange is one difference between two JSON values at a path.
type fieldChange struct {
	// op is '+' (added), '-' (removed) or '~' (changed).
	op   byte
	path string
	// old and new are the raw JSON values (nil when absent).
	old, new []byte
}

// fieldChanges lists how JSON b differs from JSON a, member by member:
// members of b in b's order (changed or added), then members of a that b
// lacks. Arrays of the same length are compared element by element, others
// as a whole. Values that differ only in spelling (spacing, number form)
// are equal. An added object with a single member is reported at that
// member's path (so `+ _meta.acp-normalize.subagent`, not `+ _meta`).
func fieldChanges(a, b []byte) []fieldChange {
	var out []fieldChange
	walkChanges("", a, b, &out)
	return out
}

func walkChanges(path string, a, b []byte, out *[]fieldChange) {
	ca, cb := rawjson.FirstByte(a), rawjson.FirstByte(b)
	switch {
	case ca == '{' && cb == '{':
		ma, orderA, errA := members(a)
		mb, orderB, errB := members(b)
		if errA != nil || errB != nil {
			break
		}
		for _, k := range orderB {
			va, inA := ma[k]
			if !inA {
				p, v := descend(joinPath(path, k), mb[k])
				*out = append(*out, fieldChange{op: '+', path: p, new: v})
				continue
			}
			walkChanges(joinPath(path, k), va, mb[k], out)
		}
		for _, k := range orderA {
			if _, inB := mb[k]; !inB {
				*out = append(*out, fieldChange{op: '-', path: joinPath(path, k), old: ma[k]})
			}
		}
		return
	case ca == '[' && cb == '[':
		ea, errA := elements(a)
		eb, errB := elements(b)
		if errA != nil || errB != nil || len(ea) != len(eb) {
			break
		}
		for i := range ea {
			walkChanges(path+"["+strconv.Itoa(i)+"]", ea[i], eb[i], out)
		}
		return
	}
	if !sameJSON(a, b) {
		*out = append(*out, fieldChange{op: '~', path: path, old: a, new: b})
	}
}

// descend follows an added object down while it has exactly one member.
func descend(path string, v []byte) (string, []byte) {
	for rawjson.FirstByte(v) == '{' {
		m, order, err := members(v)
		if err != nil || len(order) != 1 {
			break
		}
		path, v = joinPath(path, order[0]), m[order[0]]
	}
	return path, v
}

// members returns an object's members by decoded key (the last duplicate
// wins, as in encoding/json) and the keys in first-seen order.
func members(obj []byte) (map[string][]byte, []string, error) {
	m := make(map[string][]byte)
	var order []string
	err := rawjson.Members(obj, func(mb rawjson.Member) bool {
		k := decodeKey(mb.Key)
		if _, dup := m[k]; !dup {
			order = append(order, k)
		}
		m[k] = mb.Value
		return true
	})
	return m, order, err
}

func elements(arr []byte) ([][]byte, error) {
	var out [][]byte
	err := rawjson.Elements(arr, func(v []byte) bool {
		out = append(out, v)
		return true
	})
	return out, err
}

func decodeKey(raw []byte) string {
	if s, ok := rawjson.UnescapeKey(raw); ok {
		return s
	}
	return string(raw)
}

// sameJSON reports whether two raw JSON values are equal as values.
func sameJSON(a, b []byte) bool {
	if bytes.Equal(a, b) {
		return true
	}
	va, okA := decode(a)
	vb, okB := decode(b)
	return okA && okB && reflect.DeepEqual(va, vb)
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

// joinPath appends key to a dotted path, quoting keys that would make
// the path ambiguous or that hold runes a terminal must not get (quoted,
// they are escaped as in Go: "\x1bc").
func joinPath(path, key string) string {
	if key == "" || strings.ContainsAny(key, ".[]\" \n\\") || strings.IndexFunc(key, terminal.Unsafe) >= 0 {
		key = strconv.Quote(key)
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

// render renders the change with values cut to about limit characters.
func (c fieldChange) render(limit int) string {
	path := terminal.Text(c.path) // keys are vendor data
	switch c.op {
	case '+':
		return "+ " + path + " = " + shortValue(c.new, limit)
	case '-':
		return "- " + path + " (was " + shortValue(c.old, limit) + ")"
	}
	return "~ " + path + ": " + shortValue(c.old, limit) + " → " + shortValue(c.new, limit)
}

// memberLimit is how long a member's value may be in a shortened object.
const memberLimit = 24

// statusFirst moves the members that say where a thing stands (status,
// state) to the front of a shortened object, where they are not cut off.
func statusFirst(order []string) []string {
	out := make([]string, 0, len(order))
	for _, k := range order {
		if k == "status" || k == "state" {
			out = append(out, k)
		}
	}
	for _, k := range order {
		if k != "status" && k != "state" {
			out = append(out, k)
		}
	}
	return out
}

// shortValue renders a raw JSON value on one line in about limit
// characters: as is when it fits, else an object as its members in order
// with short values, status first ({status:"running", model:"gpt-5…", …}),
// and an array
// as its length.
func shortValue(v []byte, limit int) string {
	v = bytes.TrimSpace(v)
	if runeLen(string(v)) <= limit {
		return terminal.Line(string(v), limit)
	}
	switch rawjson.FirstByte(v) {
	case '{':
		m, order, err := members(v)
		if err != nil {
			break
		}
		var sb strings.Builder
		sb.WriteByte('{')
		for i, k := range statusFirst(order) {
			part := terminal.Text(k) + ":" + shortValue(m[k], memberLimit)
			if i > 0 {
				part = ", " + part
			}
			if i > 0 && runeLen(sb.String())+runeLen(part) > limit {
				sb.WriteString(", …")
				break
			}
			sb.WriteString(part)
		}
		sb.WriteByte('}')
		return sb.String()
	case '[':
		if es, err := elements(v); err == nil {
			if len(es) == 1 {
				return "[1 item]"
			}
			return "[" + strconv.Itoa(len(es)) + " items]"
		}
	case '"':
		var s string
		if json.Unmarshal(v, &s) == nil {
			return `"` + terminal.Line(s, limit) + `"`
		}
	}
	return terminal.Line(string(v), limit)
}

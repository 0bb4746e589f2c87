package cursor

import (
	"strconv"
	"strings"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
)

// summarize describes the params of a Cursor method on one line, for the
// replay timeline (rewrite.Module.Summarize).
func summarize(method string, params []byte, quote func(string) string) string {
	var d []string
	switch strings.TrimPrefix(strings.TrimPrefix(method, "_"), "cursor/") {
	case "task":
		d = append(d, scalarAt(params, "toolCallId"), quote(scalarAt(params, "description")))
		if m := scalarAt(params, "model"); m != "" {
			d = append(d, "model "+m)
		}
	case "update_todos":
		d = append(d, count(elementsAt(params, "todos"), "todo"))
		if mg, ok := rawjson.Lookup(params, "merge"); ok && (string(mg) == "true" || string(mg) == "false") {
			d = append(d, "merge="+string(mg))
		}
	case "create_plan":
		d = append(d, quote(scalarAt(params, "name")), count(elementsAt(params, "todos"), "todo"))
	case "ask_question":
		d = append(d, count(elementsAt(params, "questions"), "question"))
	case "generate_image":
		d = append(d, quote(scalarAt(params, "description")))
	}
	var out []string
	for _, w := range d {
		if w != "" {
			out = append(out, w)
		}
	}
	return strings.Join(out, " ")
}

// scalarAt returns a string, number or boolean member as text, else "".
func scalarAt(obj []byte, key string) string {
	v, ok := rawjson.Lookup(obj, key)
	if !ok {
		return ""
	}
	switch c := rawjson.FirstByte(v); {
	case c == '"':
		return str(v)
	case c == 't' || c == 'f' || c == '-' || (c >= '0' && c <= '9'):
		return string(v)
	}
	return ""
}

// elementsAt counts the elements of an array member (0 for no array).
func elementsAt(obj []byte, key string) int {
	v, _ := rawjson.Lookup(obj, key)
	n := 0
	_ = rawjson.Elements(v, func([]byte) bool { n++; return true })
	return n
}

// count says "1 todo", "2 todos".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

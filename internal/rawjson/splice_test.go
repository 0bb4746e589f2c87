package rawjson

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"unicode/utf8"
)

func TestSet(t *testing.T) {
	tests := []struct {
		name  string
		obj   string
		path  []string
		value string
		want  string
	}{
		{"replace keeps other bytes", `{"b" : 1, "a":"<&>" }`, []string{"b"}, `2`, `{"b" : 2, "a":"<&>" }`},
		{"add to empty object", `{}`, []string{"x"}, `1`, `{"x":1}`},
		{"add to empty object with spaces", `{ }`, []string{"x"}, `1`, `{ "x":1}`},
		{"add appends after last member", `{"a":1}`, []string{"x"}, `true`, `{"a":1,"x":true}`},
		{"creates missing path", `{"params":{"update":{"k":1}}}`, []string{"params", "update", "_meta", "acp-normalize"}, `{"v":1}`, `{"params":{"update":{"k":1,"_meta":{"acp-normalize":{"v":1}}}}}`},
		{"merges into existing _meta", `{"_meta":{"claudeCode":{"toolName":"Agent"}}}`, []string{"_meta", "acp-normalize"}, `{}`, `{"_meta":{"claudeCode":{"toolName":"Agent"},"acp-normalize":{}}}`},
		{"replaces own key", `{"_meta":{"acp-normalize":{"old":1},"z":2}}`, []string{"_meta", "acp-normalize"}, `{"new":2}`, `{"_meta":{"acp-normalize":{"new":2},"z":2}}`},
		{"last duplicate is replaced", `{"a":1,"a":2}`, []string{"a"}, `3`, `{"a":1,"a":3}`},
		{"escaped key matches", `{"\u0061":1}`, []string{"a"}, `3`, `{"\u0061":3}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Set([]byte(tt.obj), []byte(tt.value), tt.path...)
			checkEdit(t, "Set", got, err, tt.want)
		})
	}
	if _, err := Set([]byte(`{"a":1}`), []byte(`1`), "a", "b"); err == nil {
		t.Fatal("Set through a number succeeded")
	}
	if _, err := Set([]byte(`[1]`), []byte(`1`), "a"); err == nil {
		t.Fatal("Set on an array succeeded")
	}
}

func TestDelete(t *testing.T) {
	tests := []struct {
		name, obj string
		path      []string
		want      string
	}{
		{"only member", `{"a":1}`, []string{"a"}, `{}`},
		{"first of two", `{"a":1, "b":2}`, []string{"a"}, `{"b":2}`},
		{"last of two", `{"a":1, "b":2}`, []string{"b"}, `{"a":1}`},
		{"middle", `{"a":1,"b":2,"c":3}`, []string{"b"}, `{"a":1,"c":3}`},
		{"nested", `{"u":{"status":"x","t":1}}`, []string{"u", "status"}, `{"u":{"t":1}}`},
		{"absent is unchanged", `{"a":1}`, []string{"z"}, `{"a":1}`},
		{"duplicates all removed", `{"a":1,"b":2,"a":3}`, []string{"a"}, `{"b":2}`},
		{"duplicate first key", `{"a":1,"a":2,"b":3}`, []string{"a"}, `{"b":3}`},
		{"spacing kept", "{ \"a\" : 1 ,\n \"b\" : 2 }", []string{"b"}, "{ \"a\" : 1 }"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Delete([]byte(tt.obj), tt.path...)
			checkEdit(t, "Delete", got, err, tt.want)
		})
	}
}

// FuzzSet checks that Set produces valid JSON in which the path holds the
// value and every other top-level member is unchanged.
func FuzzSet(f *testing.F) {
	f.Add([]byte(`{"a":{"b":1},"c":"<>"}`), "a", "b", []byte(`{"x":[1]}`))
	f.Add([]byte(`{}`), "_meta", "acp-normalize", []byte(`"s"`))
	f.Fuzz(func(t *testing.T, obj []byte, k1, k2 string, value []byte) {
		var before map[string]any
		if json.Unmarshal(obj, &before) != nil || !json.Valid(value) || !plain(obj) ||
			!utf8.ValidString(k1) || !utf8.ValidString(k2) {
			return
		}
		out, err := Set(obj, value, k1, k2)
		if err != nil {
			return // e.g. k1 holds a non-object
		}
		var after map[string]any
		if err := json.Unmarshal(out, &after); err != nil {
			t.Fatalf("Set made invalid JSON: %s", out)
		}
		var want any
		_ = json.Unmarshal(value, &want)
		inner, _ := after[k1].(map[string]any)
		if !reflect.DeepEqual(inner[k2], want) {
			t.Fatalf("path holds %v, want %v", inner[k2], want)
		}
		for k, v := range before {
			if k != k1 && !reflect.DeepEqual(after[k], v) {
				t.Fatalf("member %q changed", k)
			}
		}
	})
}

// FuzzDelete checks that Delete keeps JSON valid, removes the key and
// keeps every other member, duplicates and escapes included.
func FuzzDelete(f *testing.F) {
	f.Add([]byte(`{"a":1,"a":2,"b":3}`), "a")
	f.Add([]byte(`{ "x" : [1,{"a":2}] , "a":{} }`), "a")
	f.Fuzz(func(t *testing.T, obj []byte, key string) {
		var before map[string]json.RawMessage
		if json.Unmarshal(obj, &before) != nil || !utf8.ValidString(key) {
			return
		}
		out, err := Delete(obj, key)
		if err != nil {
			t.Fatalf("Delete failed on valid JSON: %v", err)
		}
		var after map[string]json.RawMessage
		if err := json.Unmarshal(out, &after); err != nil {
			t.Fatalf("Delete made invalid JSON: %q -> %q", obj, out)
		}
		if _, ok := after[key]; ok && bytes.IndexByte(obj, '\\') < 0 {
			t.Fatalf("key %q still in %q", key, out)
		}
		for k, v := range before {
			if k != key && string(after[k]) != string(v) && bytes.IndexByte(obj, '\\') < 0 {
				t.Fatalf("member %q changed: %q -> %q", k, obj, out)
			}
		}
	})
}

// plain reports whether obj has no duplicate or escaped keys at the levels
// Set walks (the top level and one below).
func plain(obj []byte) bool { return plainKeys(obj, 1) }

func plainKeys(obj []byte, depth int) bool {
	ok := true
	seen := map[string]bool{}
	_ = Members(obj, func(m Member) bool {
		if bytes.IndexByte(m.Key, '\\') >= 0 || seen[string(m.Key)] {
			ok = false
		}
		seen[string(m.Key)] = true
		if depth > 0 && FirstByte(m.Value) == '{' && !plainKeys(m.Value, depth-1) {
			ok = false
		}
		return ok
	})
	return ok
}

func TestSetAll(t *testing.T) {
	tests := []struct {
		name, obj string
		edits     []Edit
		want      string
	}{
		{"two inserts into an empty object", `{"u":{ }}`, []Edit{{[]string{"u", "a"}, []byte(`1`)}, {[]string{"u", "b"}, []byte(`2`)}}, `{"u":{ "a":1,"b":2}}`},
		{"inserts and a replace", `{"u":{"t":"x"}}`, []Edit{{[]string{"u", "n"}, []byte(`"n"`)}, {[]string{"u", "t"}, []byte(`"y"`)}, {[]string{"u", "_meta", "k"}, []byte(`{}`)}}, `{"u":{"t":"y","n":"n","_meta":{"k":{}}}}`},
		{"same as Set one by one", `{"params":{"update":{"_meta":{"v":1}}}}`, []Edit{{[]string{"params", "update", "_meta", "acp-normalize", "s"}, []byte(`1`)}, {[]string{"params", "update", "title"}, []byte(`"T"`)}}, `{"params":{"update":{"_meta":{"v":1,"acp-normalize":{"s":1}},"title":"T"}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := SetAll([]byte(tt.obj), tt.edits...)
			checkEdit(t, "SetAll", got, err, tt.want)
			one := []byte(tt.obj)
			for _, e := range tt.edits {
				if one, err = Set(one, e.Value, e.Path...); err != nil {
					t.Fatal(err)
				}
			}
			if string(one) != tt.want {
				t.Fatalf("Set one by one = %s, want %s", one, tt.want)
			}
		})
	}
	if _, err := SetAll([]byte(`{"a":{"b":1}}`), Edit{[]string{"a"}, []byte(`1`)}, Edit{[]string{"a", "b"}, []byte(`2`)}); err == nil {
		t.Fatal("overlapping edits accepted")
	}
}

// checkEdit fails unless the edit by fn succeeded and gave want, byte for
// byte.
func checkEdit(t *testing.T, fn string, got []byte, err error, want string) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Fatalf("%s = %s, want %s", fn, got, want)
	}
}

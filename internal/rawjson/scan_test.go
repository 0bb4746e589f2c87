package rawjson

import (
	"testing"
)

func TestLookup(t *testing.T) {
	obj := []byte(`{"params":{"update":{"sessionUpdate":"tool_call","rawInput":{"_toolName":"task"}},"n":[1,2]},"params2":1,"dup":1,"dup":2,"esc\u0061pe":"yes","s":"a\"b\\"}`)
	tests := []struct {
		name string
		path []string
		want string
		ok   bool
	}{
		{"nested", []string{"params", "update", "rawInput", "_toolName"}, `"task"`, true},
		{"array value raw", []string{"params", "n"}, `[1,2]`, true},
		{"missing", []string{"params", "nope"}, "", false},
		{"through a non-object", []string{"params2", "x"}, "", false},
		{"last duplicate wins", []string{"dup"}, `2`, true},
		{"escaped key", []string{"escape"}, `"yes"`, true},
		{"string with escapes", []string{"s"}, `"a\"b\\"`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := Lookup(obj, tt.path...)
			if ok != tt.ok || string(got) != tt.want {
				t.Fatalf("Lookup(%v) = %q, %v; want %q, %v", tt.path, got, ok, tt.want, tt.ok)
			}
		})
	}
	if s, ok := LookupString(obj, "s"); !ok || s != `a"b\` {
		t.Fatalf("LookupString = %q %v", s, ok)
	}
}

func TestElements(t *testing.T) {
	var got []string
	err := Elements([]byte(` [ 1 , "a,]" , {"b":[2]} , [] ] `), func(v []byte) bool {
		got = append(got, string(v))
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`1`, `"a,]"`, `{"b":[2]}`, `[]`}
	if len(got) != len(want) {
		t.Fatalf("got %q", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %q, want %q", got, want)
		}
	}
	for _, bad := range []string{`[1,`, `[1 2]`, `{}`, `[`} {
		if err := Elements([]byte(bad), func([]byte) bool { return true }); err == nil {
			t.Errorf("Elements(%q) accepted malformed input", bad)
		}
	}
}

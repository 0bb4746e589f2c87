package pipe

import (
	"strings"
	"testing"
)

// TestIDKey: two raw ids have one key exactly when they are the same
// JSON value (rule F6), so that the router and check pair an answer with
// its request alike.
func TestIDKey(t *testing.T) {
	tests := []struct {
		name string
		a, b string
		same bool
	}{
		{"integer and its exponent spelling", `100`, `1E2`, true},
		{"lower-case exponent", `100`, `1e2`, true},
		{"exponent with a plus", `100`, `1e+2`, true},
		{"integer and a fraction of zero", `1`, `1.0`, true},
		{"minus zero is zero", `0`, `-0`, true},
		{"minus zero with a fraction", `0`, `-0.0`, true},
		{"decimal with a trailing zero", `1.5`, `1.50`, true},
		{"decimal and its exponent spelling", `0.015`, `1.5e-2`, true},
		{"string with an escape", `"a"`, `"\u0061"`, true},
		{"escaped slash", `"a/b"`, `"a\/b"`, true},
		{"same bytes", `"x"`, `"x"`, true},
		{"different integers", `1`, `2`, false},
		{"negative and positive", `-1`, `1`, false},
		{"number and the string of its digits", `1`, `"1"`, false},
		{"string and another", `"a"`, `"b"`, false},
		{"fraction and integer", `1.5`, `1`, false},
		{"string spelled like a fraction key", `"3/2"`, `1.5`, false},
		{"null and the string null", `null`, `"null"`, false},
		{"huge exponent is its own key", `1e999999999`, `1e999999998`, false},
		// JavaScript's strings are UTF-16: a lone surrogate is a value of
		// its own, not the replacement character Go decodes it to.
		{"two lone surrogates", `"\ud800"`, `"\ud801"`, false},
		{"a lone surrogate and the replacement character", `"\ud800"`, `"\ufffd"`, false},
		{"a lone surrogate and its spelling with a backslash", `"\ud800"`, `"\\ud800"`, false},
		{"a lone surrogate in either case", `"\ud800"`, `"\uD800"`, true},
		{"a surrogate pair and its character", `"\ud83d\ude00"`, `"😀"`, true},
		{"a quote escaped two ways", `"\""`, `"\u0022"`, true},
		{"a backslash escaped two ways", `"\\"`, `"\u005c"`, true},
		{"a newline escaped two ways", `"\n"`, `"\u000a"`, true},
		{"a non-ASCII letter escaped or not", `"é"`, `"\u00e9"`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ka, kb := IDKey(tt.a), IDKey(tt.b)
			if (ka == kb) != tt.same {
				t.Fatalf("IDKey(%s) = %q, IDKey(%s) = %q: same = %v, want %v", tt.a, ka, tt.b, kb, ka == kb, tt.same)
			}
		})
	}
}

func FuzzIDKey(f *testing.F) {
	for _, s := range []string{`"a"`, `"\u0061"`, `1E2`, `100`, `-0`, `1.50`, `"\""`, `null`, `1e999999999`, `"\ud800"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		key := IDKey(raw)
		if IDKey(key) != key && strings.IndexByte(key, '\\') < 0 && !strings.Contains(key, "/") {
			t.Fatalf("IDKey(%q) = %q is not stable", raw, key)
		}
		if plainInteger(raw) || (strings.HasPrefix(raw, `"`) && !strings.Contains(raw, `\`)) {
			if key != raw {
				t.Fatalf("fast-path id %q keyed %q", raw, key)
			}
		}
	})
}

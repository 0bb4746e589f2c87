package rawjson

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestDecodeString(t *testing.T) {
	tests := []struct {
		name, raw, want string
		ok              bool
	}{
		{"plain", `"abc"`, "abc", true},
		{"escapes", `"a\"b\\c\/d\n\t\r\b\f"`, "a\"b\\c/d\n\t\r\b\f", true},
		{"unicode escape", `"\u0061\u00e9"`, "aé", true},
		{"surrogate pair", `"\ud83d\ude00"`, "😀", true},
		{"lone surrogate", `"\ud83dx"`, "\ufffdx", true},
		{"invalid utf-8 replaced", "\"a\xffb\"", "a\ufffdb", true},
		{"raw control byte", "\"a\nb\"", "", false},
		{"bad escape", `"\x"`, "", false},
		{"short unicode escape", `"\u12"`, "", false},
		{"no string", `12`, "", false},
		{"unterminated", `"ab`, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := DecodeString([]byte(tt.raw))
			if got != tt.want || ok != tt.ok {
				t.Fatalf("DecodeString(%s) = %q, %v; want %q, %v", tt.raw, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestAppendString(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"html stays", "<a&b>", `"<a&b>"`},
		{"short escapes", "\"\\\n\r\t\b\f", `"\"\\\n\r\t\b\f"`},
		{"control", "\x01", `"\u0001"`},
		{"line separators", "\u2028\u2029", `"\u2028\u2029"`},
		{"invalid utf-8", "a\xffb", `"a\ufffdb"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(Text(tt.in)); got != tt.want {
				t.Fatalf("Text(%q) = %s, want %s", tt.in, got, tt.want)
			}
		})
	}
}

// FuzzStrings checks AppendString against encoding/json (HTML escaping
// off) and DecodeString against json.Unmarshal, byte for byte.
func FuzzStrings(f *testing.F) {
	for _, s := range []string{"", "a", `"\u00e9"`, "\"\\\n", "\xff", "\u2028", `"\ud800\udc00"`, `"\ud800"`, "<>&"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if n := StringLen(s); n != len(want) {
			t.Fatalf("StringLen(%q) = %d, encoding takes %d", s, n, len(want))
		}
		if got := Text(s); !bytes.Equal(got, want) {
			t.Fatalf("Text(%q) = %s, encoding/json says %s", s, got, want)
		}
		var ref string
		refErr := json.Unmarshal([]byte(s), &ref)
		got, ok := DecodeString([]byte(s))
		if len(s) < 2 || s[0] != '"' || s[len(s)-1] != '"' {
			refErr = json.Unmarshal([]byte("x"), &ref) // DecodeString takes one string token only
		}
		if ok != (refErr == nil) || (ok && got != ref) {
			t.Fatalf("DecodeString(%q) = %q, %v; json.Unmarshal: %q, %v", s, got, ok, ref, refErr)
		}
	})
}

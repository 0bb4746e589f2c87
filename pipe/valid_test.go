package pipe

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// TestCheck: Check says which of the two things is wrong (a
// valid frame nested 500,000 deep was reported as not valid JSON).
func TestCheck(t *testing.T) {
	tests := []struct {
		name, in string
		want     error
	}{
		{"valid", `{"a":[1]}`, nil},
		{"bad literal", `{"a":tru}`, ErrNotJSON},
		{"deep at the limit", strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth), nil},
		{"valid but deeper than the limit", strings.Repeat("[", 500_000) + strings.Repeat("]", 500_000), ErrTooDeep},
		{"broken before the limit", `[` + strings.Repeat("{", 5), ErrNotJSON},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Check([]byte(tt.in))
			if tt.want == nil && err != nil || tt.want != nil && !errors.Is(err, tt.want) {
				t.Fatalf("Check = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestValidJSON(t *testing.T) {
	tests := []struct {
		name, in string
		want     bool
	}{
		{"object", `{"a":[1,-2.5e+3,true,false,null,"x\u00e9\n"],"b":{}}`, true},
		{"spaces around", " \t\r\n[ ]\n", true},
		{"empty", ``, false},
		{"two values", `{} {}`, false},
		{"trailing comma", `[1,]`, false},
		{"leading zero", `01`, false},
		{"bare minus", `-`, false},
		{"dot without digits", `1.`, false},
		{"exponent without digits", `1e+`, false},
		{"control character in string", "\"a\tb\"", false},
		{"bad escape", `"\x"`, false},
		{"short unicode escape", `"\u12"`, false},
		{"unterminated string", `"abc`, false},
		{"invalid utf-8 accepted as json.Valid does", "\"\xff\"", true},
		{"missing colon", `{"a" 1}`, false},
		{"key not a string", `{1:2}`, false},
		{"mismatched close", `[}`, false},
		{"bad literal", `nul`, false},
		{"deep at the limit", strings.Repeat("[", maxValidDepth) + strings.Repeat("]", maxValidDepth), true},
		{"deeper than a capture line can hold", strings.Repeat("[", maxValidDepth+1) + strings.Repeat("]", maxValidDepth+1), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := validJSON([]byte(tt.in)); got != tt.want {
				t.Fatalf("validJSON(%.40q) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}

// FuzzValidJSON: validJSON agrees with encoding/json.Valid (below the
// depth limit).
func FuzzValidJSON(f *testing.F) {
	for _, s := range []string{`{"a":[1,2.5e-3,"\u00e9"]}`, `[`, `"\`, `-0.0E+1`, `{"a":}`, `[1 2]`, ` null `} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if strings.Count(string(b), "[")+strings.Count(string(b), "{") >= maxValidDepth {
			return
		}
		if got, want := validJSON(b), json.Valid(b); got != want {
			t.Fatalf("validJSON(%q) = %v, json.Valid = %v", b, got, want)
		}
	})
}

// TestValidStringEveryOffset: the eight-bytes-at-a-time scan of a string
// stops at a quote, a backslash or a control byte wherever it lies among
// plain and non-ASCII bytes, as encoding/json reads it.
func TestValidStringEveryOffset(t *testing.T) {
	plain := []string{"a", "é", "\x7f", "\xff"}
	specials := []string{`"`, `\"`, `\\`, `\u00e9`, `\x`, "\x00", "\x1f", "\n", " "}
	for _, p := range plain {
		for _, sp := range specials {
			for n := range 20 {
				for m := range 3 {
					in := []byte(`["` + strings.Repeat(p, n) + sp + strings.Repeat(p, m) + `"]`)
					if got, want := validJSON(in), json.Valid(in); got != want {
						t.Fatalf("validJSON(%q) = %v, json.Valid = %v", in, got, want)
					}
				}
			}
		}
	}
}

// BenchmarkValid: the validity check of P5 (Check, what the router runs
// on every frame a module would rewrite) on a 1 MB tool-call frame of
// escape-dense text, against encoding/json's Valid (docs/performance.md).
func BenchmarkValid(b *testing.B) {
	frame := []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"update":{"sessionUpdate":"tool_call_update","content":[{"type":"text","text":"` +
		strings.Repeat(`file contents with \"quotes\", tabs\t and naïve text `, 20000) + `"}]}}}`)
	b.SetBytes(int64(len(frame)))
	b.Run("pipe.Check", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if err := Check(frame); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding/json", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if !json.Valid(frame) {
				b.Fatal("not valid")
			}
		}
	})
}

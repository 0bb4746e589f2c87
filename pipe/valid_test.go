package pipe

import (
	"encoding/json"
	"strings"
	"testing"
)

var validCases = []string{
	``, ` `, `{}`, `[]`, `{"a":1}`, `{"a":1,}`, `[1,]`, `[,1]`, `{"a" 1}`, `{1:2}`, `{"a":1}}`, `[[]`, `"\u00e9"`,
	`"\u00g9"`, `"\x"`, "\"a\tb\"", "\"\xff\xfe\"", `-0`, `-`, `01`, `1.`, `1.5e`, `1.5e+3`, `1E-0`, `.5`,
	`true`, `tru`, `nul`, `null `, ` null x`, `{"a":[1,{"b":null}],"c":"\"\\\/\b\f\n\r\t"}`, `[1 2]`, `{"a":1 "b":2}`,
	"\n\t\r {\n} \n", `"unterminated`, `"ends in backslash\`, `{"a":}`, `[-]`, `[1e5,-0.0,2E+9]`,
	strings.Repeat("[", 10000) + strings.Repeat("]", 10000), strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
	strings.Repeat(`{"a":`, 10001) + "1" + strings.Repeat("}", 10001),
}

func TestValidAgreesWithEncodingJSON(t *testing.T) {
	for _, c := range validCases {
		if got, want := Valid([]byte(c)), json.Valid([]byte(c)); got != want {
			t.Errorf("Valid(%.60q) = %v, encoding/json says %v", c, got, want)
		}
	}
}

// FuzzValid: Valid is encoding/json's Valid.
func FuzzValid(f *testing.F) {
	for _, c := range validCases {
		if len(c) < 200 {
			f.Add([]byte(c))
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := Valid(b), json.Valid(b); got != want {
			t.Fatalf("Valid(%q) = %v, encoding/json says %v", b, got, want)
		}
	})
}

func BenchmarkValid(b *testing.B) {
	frame := []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"update":{"sessionUpdate":"tool_call_update","content":[{"type":"text","text":"` +
		strings.Repeat(`file contents with \"quotes\", tabs\t and naïve text `, 20000) + `"}]}}}`)
	b.SetBytes(int64(len(frame)))
	b.Run("pipe", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			Valid(frame)
		}
	})
	b.Run("encoding/json", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			json.Valid(frame)
		}
	})
}

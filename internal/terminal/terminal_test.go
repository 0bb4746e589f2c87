package terminal

import (
	"encoding/json"
	"testing"
)

// TestJSON: runes that steer a terminal become JSON escapes; the
// JSON decodes to the same values; whitespace between tokens stays.
func TestJSON(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain", `{"a":"b é ✓"}`, `{"a":"b é ✓"}`},
		{"indented", "{\n\t\"a\": 1\r\n}", "{\n\t\"a\": 1\r\n}"},
		{"C1 CSI", "{\"a\":\"x\u009b31m\"}", `{"a":"x\u009b31m"}`},
		{"OSC", "{\"a\":\"\u009d0;t\u009c\"}", `{"a":"\u009d0;t\u009c"}`},
		{"RLO", "[\"\u202eabc\"]", `["\u202eabc"]`},
		{"DEL", "[\"\x7f\"]", `["\u007f"]`},
		{"beyond the basic plane", "[\"\U000e0001\"]", `["\udb40\udc01"]`},
		{"line separator", "[\"\u2028\"]", `["\u2028"]`},
	}
	// Not UTF-8: JSON text cannot hold it, U+FFFD takes its place.
	if got := string(JSON([]byte("[\"a\x9b31m\xff\"]"))); got != "[\"a\uFFFD31m\uFFFD\"]" {
		t.Errorf("invalid UTF-8: %q", got)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := string(JSON([]byte(tt.in)))
			if got != tt.want {
				t.Fatalf("JSON(%q) = %q, want %q", tt.in, got, tt.want)
			}
			var a, b any
			if err := json.Unmarshal([]byte(tt.in), &a); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(got), &b); err != nil {
				t.Fatal(err)
			}
			if ja, _ := json.Marshal(a); string(ja) != mustJSON(t, b) {
				t.Errorf("decodes to %s, want %s", mustJSON(t, b), ja)
			}
		})
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

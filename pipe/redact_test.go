package pipe

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"
)

// redactCase is one row of a redaction table: a frame or line, and what
// it must become, byte for byte.
type redactCase struct{ name, in, want string }

// checkRedact runs Redact on each case: the output is the case's want
// exactly, a valid JSON frame stays valid, and redacting the output again
// changes nothing (R2).
func checkRedact(t *testing.T, tests []redactCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Redact([]byte(tt.in))
			if string(got) != tt.want {
				t.Fatalf("Redact:\n got %s\nwant %s", got, tt.want)
			}
			if json.Valid([]byte(tt.in)) && !json.Valid(got) {
				t.Fatalf("redacted frame is not valid JSON: %s", got)
			}
			if again := Redact(got); !bytes.Equal(again, got) {
				t.Fatalf("not idempotent: %s", again)
			}
		})
	}
}

// checkRedactText runs RedactText on each case: the output is the case's
// want exactly, and redacting it again changes nothing (R2).
func checkRedactText(t *testing.T, tests []redactCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := RedactText(tt.in)
			if got != tt.want {
				t.Fatalf("RedactText(%q):\n got %q\nwant %q", tt.in, got, tt.want)
			}
			if again := RedactText(got); again != got {
				t.Fatalf("RedactText not idempotent: %q", again)
			}
		})
	}
}

func TestRedact(t *testing.T) {
	checkRedact(t, []redactCase{
		{"R2 nothing to redact is the same slice", `{"method":"session/update","params":{"text":"hi"}}`, `{"method":"session/update","params":{"text":"hi"}}`},
		{"R2 api key spellings", `{"apiKey":"a","api_key":"b","API-KEY":"c","x":"d"}`, `{"apiKey":"<redacted>","api_key":"<redacted>","API-KEY":"<redacted>","x":"d"}`},
		{"R2 token secret password", `{"accessToken":"t","clientSecret":"s","Password":"p","totalTokens":12}`, `{"accessToken":"<redacted>","clientSecret":"<redacted>","Password":"<redacted>","totalTokens":12}`},
		{"R2 authorization cookie credential nested", `{"a":{"Authorization":"Bearer x","Cookie":["c1","c2"],"credentials":{"user":"u"}}}`, `{"a":{"Authorization":"<redacted>","Cookie":["<redacted>","<redacted>"],"credentials":{"user":"<redacted>"}}}`},
		{"R2 mcpServers env list", `{"mcpServers":[{"name":"gh","command":"x","args":["--a"],"env":[{"name":"GH","value":"ghp_1"}]}]}`, `{"mcpServers":[{"name":"gh","command":"x","args":["--a"],"env":[{"name":"GH","value":"<redacted>"}]}]}`},
		{"R2 headers list keeps names", `{"headers":[{"name":"X-Api","value":"v"}, {"name":"Y","value":"w"}]}`, `{"headers":[{"name":"X-Api","value":"<redacted>"}, {"name":"Y","value":"<redacted>"}]}`},
		{"R2 env map", `{"env":{"HOME":"/root","N":1}}`, `{"env":{"HOME":"<redacted>","N":1}}`},
		{"spacing kept", "{ \"token\" : \"x\" ,\n\"k\":1 }", "{ \"token\" : \"<redacted>\" ,\n\"k\":1 }"},
		{"malformed left as is", `{"token":"x"`, `{"token":"x"`},
		{"not json left as is", `token: x`, `token: x`},
	})
}

func TestRedactArgs(t *testing.T) {
	got := RedactArgs([]string{"cursor-agent", "--api-key", "sk-1", "--token=abc", "--model", "gpt", "acp"})
	want := []string{"cursor-agent", "--api-key", "<redacted>", "--token=<redacted>", "--model", "gpt", "acp"}
	if !slices.Equal(got, want) {
		t.Fatalf("RedactArgs = %q, want %q", got, want)
	}
}

func FuzzRedact(f *testing.F) {
	f.Add([]byte(`{"apiKey":"a","env":[{"name":"x","value":"y"}],"n":[1,{"token":["z"]}]}`))
	f.Add([]byte(`{"headers":{"a":"b"}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		out := Redact(b)
		if json.Valid(b) && !json.Valid(out) {
			t.Fatalf("redaction broke JSON: %q -> %q", b, out)
		}
	})
}

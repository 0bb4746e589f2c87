package pipe

import (
	"encoding/json"
	"slices"
	"testing"
)

func TestRedact(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
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
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Redact([]byte(tt.in))
			if string(got) != tt.want {
				t.Fatalf("Redact:\n got %s\nwant %s", got, tt.want)
			}
			if json.Valid([]byte(tt.in)) && !json.Valid(got) {
				t.Fatalf("redacted frame is not valid JSON: %s", got)
			}
		})
	}
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

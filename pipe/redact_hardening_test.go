package pipe

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// TestRedactEscapedKeys: a key spelled with escapes names the same secret
// (R2).
func TestRedactEscapedKeys(t *testing.T) {
	checkRedact(t, []redactCase{
		{"escaped underscore", `{"api\u005fkey":"sk-1"}`, `{"api\u005fkey":"<redacted>"}`},
		{"escaped first letter", `{"\u0074oken":"t"}`, `{"\u0074oken":"<redacted>"}`},
		{"escaped upper case", `{"PASS\u0057ORD":"p"}`, `{"PASS\u0057ORD":"<redacted>"}`},
		{"escaped env list", `{"\u0065nv":[{"name":"A","value":"v"}]}`, `{"\u0065nv":[{"name":"A","value":"<redacted>"}]}`},
		{"escaped value key", `{"env":[{"name":"A","v\u0061lue":"v"}]}`, `{"env":[{"name":"A","v\u0061lue":"<redacted>"}]}`},
		{"escaped harmless key", `{"n\u0061me":"x"}`, `{"n\u0061me":"x"}`},
		{"bad escape left", `{"tok\uZZZZ":"x"}`, `{"tok\uZZZZ":"x"}`},
	})
}

// TestRedactDeepFrame: a frame nested two million deep with a secret key
// inside is redacted, not a crash of the whole proxy by stack overflow.
func TestRedactDeepFrame(t *testing.T) {
	const depth = 2_000_000
	for _, tt := range []struct{ name, open, close, inner, want string }{
		{"arrays", `[`, `]`, `{"token":"deep-secret"}`, `{"token":"<redacted>"}`},
		{"objects under a secret key", `{"token":[`, `]}`, `"deep-secret"`, `"<redacted>"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			frame := strings.Repeat(tt.open, depth) + tt.inner + strings.Repeat(tt.close, depth)
			got := Redact([]byte(frame))
			want := strings.Repeat(tt.open, depth) + tt.want + strings.Repeat(tt.close, depth)
			if string(got) != want {
				t.Fatalf("wrong redaction: %d bytes, secret still there: %v", len(got), bytes.Contains(got, []byte("deep-secret")))
			}
		})
	}
}

// TestRedactLargeSingleCaseText: text made of one letter in one case is
// walked in one pass. The old pre-check took 22 s for 2 MiB and, being
// quadratic, never ended on this one; here it is a plain pass.
func TestRedactLargeSingleCaseText(t *testing.T) {
	for _, letter := range []string{"A", "a", "k", "T"} {
		t.Run(letter, func(t *testing.T) {
			body := strings.Repeat(letter, 32<<20)
			frame := []byte(`{"jsonrpc":"2.0","method":"m","params":{"text":"` + body + `","token":"x"}}`)
			got := Redact(frame)
			want := `{"jsonrpc":"2.0","method":"m","params":{"text":"` + body + `","token":"<redacted>"}}`
			if string(got) != want {
				t.Fatalf("wrong redaction (%d bytes)", len(got))
			}
			text := RedactText(`{"text":"` + body)
			if text != `{"text":"`+body {
				t.Fatal("RedactText changed a harmless cut-off frame")
			}
		})
	}
}

// TestRedactText: what is found in lines that are not valid JSON (a frame
// cut off at EOF or malformed, a non-JSON line, a stderr line).
func TestRedactText(t *testing.T) {
	checkRedactText(t, []redactCase{
		{"cut-off frame pair", `{"jsonrpc":"2.0","params":{"apiKey":"sk-live","text":"hi"`, `{"jsonrpc":"2.0","params":{"apiKey":"<redacted>","text":"hi"`},
		{"value cut off at EOF", `{"params":{"token":"abcdef`, `{"params":{"token":"<redacted>"`},
		{"malformed frame pair with spaces", `{"password" : "hunter2",,}`, `{"password" : "<redacted>",,}`},
		{"escaped key in text", `{"api\u005fkey":"v"`, `{"api\u005fkey":"<redacted>"`},
		{"escaped quote inside value", `{"secret":"a\"b","x":1`, `{"secret":"<redacted>","x":1`},
		{"non-secret pair kept", `{"name":"value"`, `{"name":"value"`},
		{"openai key", `using key sk-proj-abcdefghijklmnop1234 now`, `using key <redacted> now`},
		{"anthropic key", `ANTHROPIC sk-ant-api03-abcdefghijklmnopqrstuvwx`, `ANTHROPIC <redacted>`},
		{"github token", `token ghp_abcdefghijklmnopqrstuvwxyz0123456789 ok`, `token <redacted> ok`},
		{"github oauth token", `gho_abcdefghijklmnopqrstuvwxyz0123`, `<redacted>`},
		{"github fine-grained pat", `github_pat_11ABCDEFG0123456789_abcdefghijklmnop`, `<redacted>`},
		{"aws access key id", `aws AKIAIOSFODNN7EXAMPLE here`, `aws <redacted> here`},
		{"aws session key id", `ASIAIOSFODNN7EXAMPLE`, `<redacted>`},
		{"google api key (gemini)", `GEMINI_API_KEY is AIzaSyA1b2C3d4E5f6G7h8I9j0K_lMnOpQrStUv here`, `GEMINI_API_KEY is <redacted> here`},
		{"google api key in a url", `GET https://generativelanguage.googleapis.com/v1beta/models?key=AIzaSyA1b2C3d4E5f6G7h8I9j0K-lMnOpQrStUv`, `GET https://generativelanguage.googleapis.com/v1beta/models?key=<redacted>`},
		{"slack bot token", `xoxb-1234567890-abcdefghij`, `<redacted>`},
		{"slack user token", `xoxp-1234567890-abcdefghij`, `<redacted>`},
		{"bearer", `Authorization: Bearer abc.def-ghi_jkl`, `Authorization: Bearer <redacted>`},
		{"bearer any case", `auth bearer 0123456789abcdef`, `auth bearer <redacted>`},
		{"jwt", `jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.sig_nature-x end`, `jwt <redacted> end`},
		{"url password", `fetching https://user:s3cret@example.com/repo.git`, `fetching https://user:<redacted>@example.com/repo.git`},
		{"prose kept", `task-runner asked: Bearer tokens are short; sk-1 is no key`, `task-runner asked: Bearer tokens are short; sk-1 is no key`},
		{"plain line kept", `Using worktree: /w/.wt/1`, `Using worktree: /w/.wt/1`},
	})
}

// TestRedactArgsShapes: the agent argv of the start event.
func TestRedactArgsShapes(t *testing.T) {
	tests := []struct {
		name     string
		in, want []string
	}{
		{"api key flag", []string{"agent", "--api-key", "X"}, []string{"agent", "--api-key", "<redacted>"}},
		{"token flag with =", []string{"agent", "--token=abc"}, []string{"agent", "--token=<redacted>"}},
		{"key flag", []string{"agent", "--key", "X"}, []string{"agent", "--key", "<redacted>"}},
		{"header flag", []string{"curl", "--header", "Authorization: Bearer abc"}, []string{"curl", "--header", "Authorization: <redacted>"}},
		{"short header flag", []string{"curl", "-H", "X-Api-Key: k"}, []string{"curl", "-H", "X-Api-Key: <redacted>"}},
		{"header flag with =", []string{"x", "--header=Cookie: a=b"}, []string{"x", "--header=Cookie: <redacted>"}},
		{"header without name", []string{"x", "-H", "opaque"}, []string{"x", "-H", "<redacted>"}},
		{"env-style key", []string{"env", "NAME_KEY=v", "FOO_TOKEN=t", "OPENAI_API_KEY=sk"}, []string{"env", "NAME_KEY=<redacted>", "FOO_TOKEN=<redacted>", "OPENAI_API_KEY=<redacted>"}},
		{"env-style harmless", []string{"env", "HOME=/root", "MONKEY_BUSINESS=1"}, []string{"env", "HOME=/root", "MONKEY_BUSINESS=1"}},
		{"url with password", []string{"agent", "--proxy", "http://u:p4ss@host:8080"}, []string{"agent", "--proxy", "http://u:<redacted>@host:8080"}},
		{"token shape positional", []string{"agent", "ghp_abcdefghijklmnopqrstuvwxyz0123456789"}, []string{"agent", "<redacted>"}},
		{"flag at the end", []string{"agent", "--api-key"}, []string{"agent", "--api-key"}},
		{"ordinary flags kept", []string{"cursor-agent", "--model", "gpt", "acp"}, []string{"cursor-agent", "--model", "gpt", "acp"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := RedactArgs(tt.in); !slices.Equal(got, tt.want) {
				t.Fatalf("RedactArgs(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// FuzzRedactMatchesRecursive: the linear redactor gives the recursive
// one's output (which looks into every string value, with no marker to
// gate it), keeps valid JSON valid, and is idempotent.
func FuzzRedactMatchesRecursive(f *testing.F) {
	for _, s := range []string{
		`{"apiKey":"a","env":[{"name":"x","value":"y"}],"n":[1,{"token":["z"]}]}`,
		`{"headers":{"a":"b"}}`, `{"headers":["v",{"value":"w"}]}`, `[{"secret":{"a":["b",{"c":"d"}]}}]`,
		` {"token" : "x" } `, `{"token":"x"`, `{"a":[1,2,}`, `{"env":{"A":1,"B":"b"}}`,
		`{"arguments":"{\"token\":\"t\",\"a\":\"{\\\"privateKey\\\":1}\"}"}`,
		`{"t":"Authorization: Basic dXNlcjpodW50ZXIy and Bearer abc.def-ghi https://u:p@h/ sk-proj-abcdefghijklmnop1234"}`,
		`{"t":"\u0073k-proj-abcdefghijklmnop1234 -----BEGIN EC PRIVATE KEY-----\nAAA\n-----END EC PRIVATE KEY-----"}`,
		`["{\"apiKey\": \"k\"} tail", "[1,{\"pwd\":\"p\"}]"]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got := Redact(b)
		if want := oldRedact(b); !bytes.Equal(got, want) {
			t.Fatalf("Redact(%q):\n got %q\nwant %q", b, got, want)
		}
		if json.Valid(b) && !json.Valid(got) {
			t.Fatalf("redaction broke JSON: %q -> %q", b, got)
		}
		if again := Redact(got); !bytes.Equal(again, got) {
			t.Fatalf("not idempotent: %q -> %q -> %q", b, got, again)
		}
		_ = RedactText(string(b))
	})
}

// BenchmarkRedactSingleCase: a 2 MiB string of one letter in a frame with a
// secret key (the old pre-check took 22 s for it).
func BenchmarkRedactSingleCase(b *testing.B) {
	frame := []byte(`{"jsonrpc":"2.0","method":"m","params":{"text":"` + strings.Repeat("A", 2<<20) + `","token":"x"}}`)
	b.SetBytes(int64(len(frame)))
	for b.Loop() {
		Redact(frame)
	}
}

// FuzzRedactShapesMatchRegexp: the marker search finds the token shapes
// where the regular expressions it replaced found them (R2), and
// RedactText is idempotent.
func FuzzRedactShapesMatchRegexp(f *testing.F) {
	for _, s := range []string{
		"sk-proj-abcdefghijklmnop1234", "xsk-abcdefghijklmnopqrst", "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
		"AKIAIOSFODNN7EXAMPLEXX", "AIzaSyA1b2C3d4E5f6G7h8I9j0K_lMnOpQrStUv", "xoxb-1234567890-abc",
		"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.sig.more", "sk-sk-abcdefghijklmnopqrst", "eyJeyJabcdefghijklmnopqr", "sk-x sk-abcdefghijklmnop1234",
		"Authorization: Basic dXNlcjpodW50ZXIy https://u:p@h/ Bearer abc.def-ghi",
	} {
		f.Add(s)
	}
	list := oldTokenShapeList()
	ix := newMarkerIndex(shapeMarkers(list))
	f.Fuzz(func(t *testing.T, s string) {
		want := oldTokenShapes.ReplaceAllLiteralString(s, RedactedText)
		var b strings.Builder
		copied := 0
		for _, sp := range findShapesOf(list, ix, []byte(s), nil) {
			b.WriteString(s[copied:sp.start])
			b.WriteString(RedactedText)
			copied = sp.end
		}
		b.WriteString(s[copied:])
		if b.String() != want {
			t.Fatalf("shapes of %q:\n got %q\nwant %q", s, b.String(), want)
		}
		once := RedactText(s)
		if again := RedactText(once); again != once {
			t.Fatalf("RedactText not idempotent: %q -> %q -> %q", s, once, again)
		}
	})
}

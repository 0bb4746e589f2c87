package pipe

import (
	"bytes"
	"strings"
	"testing"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
)

// reviewToken is a GitHub token shape (docs/debugging.md's table).
var reviewToken = "ghp_" + strings.Repeat("a1", 15)

// TestRedactTextEncodedStrings: R2 (strengthened 2026-12-01) holds for a
// line that is not valid JSON too, the frame cut off at EOF or malformed
// that the capture keeps as text: the string values in it are decoded
// before the search, as those of a valid frame are, so JSON encoded in a
// string (Codex's arguments) and a token spelled with escapes or after an
// escape are found there as well.
func TestRedactTextEncodedStrings(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"R2 Codex arguments in a frame cut off",
			`{"jsonrpc":"2.0","method":"session/update","params":{"update":{"rawInput":{"arguments":"{\"token\":\"hunter2secret\"}"},"x":`,
			`{"jsonrpc":"2.0","method":"session/update","params":{"update":{"rawInput":{"arguments":"{\"token\":\"<redacted>\"}"},"x":`},
		{"R2 Codex arguments cut off inside the encoded JSON",
			`{"params":{"rawInput":{"arguments":"{\"cmd\":\"x\",\"api_key\":\"hunter2sec`,
			`{"params":{"rawInput":{"arguments":"{\"cmd\":\"x\",\"api_key\":\"<redacted>\"`},
		{"R2 malformed frame with JSON in a string",
			`x{"arguments":"{\"password\":\"hunter2secret\"}"}`,
			`x{"arguments":"{\"password\":\"<redacted>\"}"}`},
		{"R2 token after an escaped newline, frame cut off",
			`{"params":{"text":"line\n` + reviewToken + `"`,
			`{"params":{"text":"line\n<redacted>"`},
		{"R2 token spelled with a \\u escape, frame cut off",
			`{"params":{"text":"\u0067hp_` + reviewToken[4:] + `","more":`,
			`{"params":{"text":"<redacted>","more":`},
		{"R2 token in an array element of a frame cut off",
			`{"params":{"lines":["ok","a\t` + reviewToken + `"],`,
			`{"params":{"lines":["ok","a\t<redacted>"],`},
		{"R2 unclosed string ending in a dangling escape",
			`{"params":{"text":"x\n` + reviewToken + `\u00`,
			`{"params":{"text":"x\n<redacted>`},
		{"no secret keeps its bytes", `{"a":"x\ny\u0041","b":` + `"{\"c\":1}"`, `{"a":"x\ny\u0041","b":` + `"{\"c\":1}"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := RedactText(c.in); got != c.want {
				t.Errorf("RedactText\n  in   %s\n  got  %s\n  want %s", c.in, got, c.want)
			}
		})
	}
}

// TestRedactJSONTextsAsFrames: an agent stderr line, a forwarded line or
// an argument that is itself valid JSON (a structured log line, Claude's
// --mcp-config) gets the rules of a frame (R2): the values of env and
// headers entries, which the text rules cannot tell, are redacted there
// too.
func TestRedactJSONTextsAsFrames(t *testing.T) {
	stderr := []string{
		`{"level":"info","msg":"mcp","mcpServers":[{"name":"db","env":[{"name":"DB_PASS","value":"env-list-secret"}]}]}`,
		`{"level":"debug","msg":"spawn","env":{"DATABASE_URL_PW":"env-map-secret"},"headers":[{"name":"X-Auth","value":"header-secret"}]}`,
	}
	var buf bytes.Buffer
	cw := NewCaptureWriter(&buf, false)
	for _, s := range stderr {
		cw.Write(Record{From: Agent, Stderr: &s})
		cw.Write(Record{From: Agent, Text: &s})
	}
	if err := cw.Close(); err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"env-list-secret", "env-map-secret", "header-secret"} {
		if strings.Contains(buf.String(), secret) {
			t.Errorf("capture leaks %q:\n%s", secret, buf.String())
		}
	}

	argv := RedactArgs([]string{"claude", "--mcp-config", `{"mcpServers":{"db":{"command":"pg-mcp","env":{"PGPASS":"argv-env-secret"}}}}`})
	if got, want := argv[2], `{"mcpServers":{"db":{"command":"pg-mcp","env":{"PGPASS":"<redacted>"}}}}`; got != want {
		t.Errorf("RedactArgs JSON argument:\n got  %s\n want %s", got, want)
	}
}

// TestRedactShapesReview: shapes of the docs' table that still let part
// of a secret through (R2): a URL password with an '@' in it (a URL
// parser takes the userinfo up to the last '@' before the host, so
// "p@ss" is the password), and an OpenPGP private key block, whose
// armor label is "PGP PRIVATE KEY BLOCK".
func TestRedactShapesReview(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"R2 URL password with @", `{"u":"https://user:p@ss-secret@host/x"}`, `{"u":"https://user:<redacted>@host/x"}`},
		{"R2 URL password with @ in a raw line", `clone https://user:p@ss@w-secret@host/x done`, `clone https://user:<redacted>@host/x done`},
		{"R2 URL password then an email in the path", `{"u":"https://user:pw-secret@host/a@b"}`, `{"u":"https://user:<redacted>@host/a@b"}`},
		{"R2 PGP private key block", `{"k":"-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBF-secret\n-----END PGP PRIVATE KEY BLOCK-----\nafter"}`, `{"k":"<redacted>\nafter"}`},
		{"PGP public key block kept", `{"k":"-----BEGIN PGP PUBLIC KEY BLOCK-----\nmQINBF\n-----END PGP PUBLIC KEY BLOCK-----"}`, `{"k":"-----BEGIN PGP PUBLIC KEY BLOCK-----\nmQINBF\n-----END PGP PUBLIC KEY BLOCK-----"}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := RedactText(c.in)
			if validJSON([]byte(c.in)) {
				got = string(Redact([]byte(c.in)))
			}
			if got != c.want {
				t.Errorf("\n  in   %s\n  got  %s\n  want %s", c.in, got, c.want)
			}
		})
	}
}

// FuzzRedactTextCutOff: a frame cut off anywhere after a secret keeps
// none of it (R2): the secret is in Codex's JSON-encoded arguments, after
// a string the fuzzer writes (escapes, quotes, nested JSON), and every cut
// of the frame that holds the whole secret is redacted by the text rules.
func FuzzRedactTextCutOff(f *testing.F) {
	for _, s := range []string{"", `x\ny`, `{\"a\":\"b\"}`, `\u0041\"`, `"`, `\`, "ghp_", `\\\"`} {
		f.Add(s, "token")
	}
	f.Add(`a`, "api_key")
	f.Add(`a`, "pass\u0077ord")
	f.Fuzz(func(t *testing.T, before, key string) {
		const secret = "S3CR3Tvalue42"
		k := rawjson.AppendString(nil, key)
		if len(before) > 256 || !isSecretKey(k[1:len(k)-1]) || strings.ContainsAny(before+key, "S") {
			return
		}
		value := rawjson.AppendString(nil, before)
		args := `{"cmd":"ls",` + string(k) + `:"` + secret + `"}`
		frame := `{"jsonrpc":"2.0","method":"session/update","params":{"text":` + string(value) + `,"rawInput":{"arguments":` + string(rawjson.AppendString(nil, args)) + `},"n":1}}`
		if !validJSON([]byte(frame)) {
			return
		}
		if out := Redact([]byte(frame)); bytes.Contains(out, []byte(secret)) {
			t.Fatalf("valid frame keeps the secret:\n%s", out)
		}
		end := strings.Index(frame, secret) + len(secret)
		for cut := end; cut < len(frame); cut++ {
			if out := RedactText(frame[:cut]); strings.Contains(out, secret) {
				t.Fatalf("cut at %d of %d keeps the secret:\n in  %s\n out %s", cut, len(frame), frame[:cut], out)
			}
		}
	})
}

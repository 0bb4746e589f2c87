package pipe

import (
	"strings"
	"testing"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
)

// TestRedactDocsTable: every shape of docs/debugging.md's "What redaction
// catches" table, with a secret of that shape, is redacted wherever the
// docs say a shape is searched for (R2): in a string value of a frame
// (also after an escaped newline and with its first byte spelled as a \u
// escape), inside JSON encoded in a string, in a line that is not valid
// JSON (cut off), in an agent stderr line and in an argument of the
// agent's argv.
func TestRedactDocsTable(t *testing.T) {
	for _, c := range []struct{ name, secret, before string }{
		{"sk- key", "sk-proj-" + strings.Repeat("Ab1_", 5), ""},
		{"sk-ant key", "sk-ant-api03-" + strings.Repeat("Ab1-", 5), ""},
		{"Stripe sk_live_", "sk_live_" + strings.Repeat("Ab1", 6), ""},
		{"Stripe sk_test_", "sk_test_" + strings.Repeat("Ab1", 6), ""},
		{"Stripe rk_live_", "rk_live_" + strings.Repeat("Ab1", 6), ""},
		{"Stripe rk_test_", "rk_test_" + strings.Repeat("Ab1", 6), ""},
		{"GitHub ghp_", "ghp_" + strings.Repeat("Ab1", 7), ""},
		{"GitHub gho_", "gho_" + strings.Repeat("Ab1", 7), ""},
		{"GitHub ghu_", "ghu_" + strings.Repeat("Ab1", 7), ""},
		{"GitHub ghs_", "ghs_" + strings.Repeat("Ab1", 7), ""},
		{"GitHub ghr_", "ghr_" + strings.Repeat("Ab1", 7), ""},
		{"GitHub github_pat_", "github_pat_" + strings.Repeat("Ab1_", 6), ""},
		{"GitLab glpat-", "glpat-" + strings.Repeat("Ab1-", 5), ""},
		{"npm_", "npm_" + strings.Repeat("Ab1", 12), ""},
		{"Hugging Face hf_", "hf_" + strings.Repeat("Ab1", 10), ""},
		{"AWS AKIA", "AKIAIOSFODNN7EXAMPLE", ""},
		{"AWS ASIA", "ASIAIOSFODNN7EXAMPLE", ""},
		{"Google AIza", "AIzaSyA1b2" + strings.Repeat("c3D4-", 6) + "x", ""},
		{"Slack xoxb-", "xoxb-1234567890-abc", ""},
		{"Slack xoxp-", "xoxp-1234567890-abc", ""},
		{"Slack xoxa-", "xoxa-1234567890-abc", ""},
		{"Slack xoxo-", "xoxo-1234567890-abc", ""},
		{"Slack xoxr-", "xoxr-1234567890-abc", ""},
		{"Slack xoxs-", "xoxs-1234567890-abc", ""},
		{"JWT", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJl", ""},
		{"Bearer", "abc.def-123_XYZ", "Authorization: Bearer "},
		{"bearer word after a header", "sometoken", "authorization: bearer "},
		{"Basic", "dXNlcjpwYXNzd29yZA==", "Authorization: Basic "},
		{"URL password", "pa55-w0rd", "https://user:"},
		{"PEM private key", "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n-----END RSA PRIVATE KEY-----", ""},
		{"PEM cut off", "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIO", ""},
		{"OpenPGP private key", "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBF\n-----END PGP PRIVATE KEY BLOCK-----", ""},
	} {
		after := " and more"
		if strings.HasPrefix(c.before, "https://") {
			after = "@git.example.com/r.git"
		}
		if strings.HasPrefix(c.secret, "-----BEGIN EC") {
			after = ""
		}
		text := "see " + c.before + c.secret + after
		// What is left of the secret to look for in the output: its
		// distinctive part (a PEM's body, a token's tail).
		probe := c.secret[len(c.secret)/2:]
		if i := strings.Index(c.secret, "-----\n"); i >= 0 {
			probe = strings.TrimLeft(c.secret[i+len("-----\n"):], "\n")[:6] // the key's body
		}
		check := func(t *testing.T, where, out string) {
			t.Helper()
			if strings.Contains(out, probe) {
				t.Errorf("%s: %q left in\n  %s", where, probe, out)
			}
		}
		t.Run(c.name, func(t *testing.T) {
			value := string(rawjson.AppendString(nil, text))
			frame := `{"jsonrpc":"2.0","method":"session/update","params":{"update":{"content":{"type":"text","text":` + value + `}}}}`
			check(t, "frame", string(Redact([]byte(frame))))
			nl := string(rawjson.AppendString(nil, "line\n"+c.before+c.secret+after))
			check(t, "frame, after \\n", string(Redact([]byte(`{"t":`+nl+`}`))))
			if c.before == "" {
				esc := `"\u00` + strings.ToLower(string("0123456789abcdef"[c.secret[0]>>4])+string("0123456789abcdef"[c.secret[0]&15])) + string(rawjson.AppendString(nil, c.secret[1:]))[1:]
				check(t, "frame, \\u escape", string(Redact([]byte(`{"t":`+esc+`}`))))
			}
			inner := `{"note":` + value + `}`
			encoded := `{"rawInput":{"arguments":` + string(rawjson.AppendString(nil, inner)) + `}}`
			check(t, "JSON in a string", string(Redact([]byte(encoded))))
			cut := frame[:len(frame)-4]
			check(t, "frame cut off", RedactText(cut))
			check(t, "frame cut off in the string", RedactText(frame[:strings.Index(frame, value)+len(value)-1]))
			check(t, "stderr line", RedactText(text))
			check(t, "argv", strings.Join(RedactArgs([]string{"agent", "--prompt", text}), " "))
		})
	}
}

// TestRedactDocsKeys: the key names the docs list as secret, and those
// they list as not.
func TestRedactDocsKeys(t *testing.T) {
	for _, k := range []string{"apiKey", "api_key", "TOKEN", "x-auth-token", "secret", "Password", "passwd", "pwd", "authorization", "Cookie", "credentials", "privatekey", "accesskey",
		"private_key", "privateKey", "accessKey", "sshKey", "X-Api-Key", "KEY", "keyId", `api\u005fkey`} {
		out := string(Redact([]byte(`{"` + k + `":"hunter2"}`)))
		if strings.Contains(out, "hunter2") {
			t.Errorf("key %s: value kept: %s", k, out)
		}
	}
	for _, k := range []string{"keyboard", "monkey", "hotkey", "keys", "name"} {
		in := `{"` + k + `":"hunter2"}`
		if out := string(Redact([]byte(in))); out != in {
			t.Errorf("key %s: value redacted: %s", k, out)
		}
	}
}

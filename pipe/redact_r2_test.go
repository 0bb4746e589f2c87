package pipe

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
)

// TestRedactR2Strengthened: the secrets rule R2 as strengthened on
// 2026-12-01, in frames that are valid JSON: key names with
// "key" as a word and passwd/pwd; string values that are themselves JSON,
// redacted inside and re-encoded; Basic and Bearer credentials and URL
// passwords inside any string; the token shapes inside any string value.
func TestRedactR2Strengthened(t *testing.T) {
	checkRedact(t, []redactCase{
		// Key names.
		{"R2 key as a word", `{"private_key":"p1","privateKey":"p2","apiKey":"p3","accessKey":"p4","sshKey":"p5","KEY":"p6","key":"p7","x-api-key":"p8","APIKey":"p9"}`,
			`{"private_key":"<redacted>","privateKey":"<redacted>","apiKey":"<redacted>","accessKey":"<redacted>","sshKey":"<redacted>","KEY":"<redacted>","key":"<redacted>","x-api-key":"<redacted>","APIKey":"<redacted>"}`},
		{"R2 key run together", `{"privatekey":"p1","accesskey":"p2","AWS_SECRET_ACCESS_KEY":"p3"}`, `{"privatekey":"<redacted>","accesskey":"<redacted>","AWS_SECRET_ACCESS_KEY":"<redacted>"}`},
		{"R2 keyboard and monkey are not keys", `{"keyboard":"us","monkey":"george","hotkey":"ctrl+k","turnkey":"yes","keys":"abc"}`, `{"keyboard":"us","monkey":"george","hotkey":"ctrl+k","turnkey":"yes","keys":"abc"}`},
		{"R2 passwd and pwd", `{"passwd":"a","db_pwd":"b","PWD":"c","userPasswd":"d"}`, `{"passwd":"<redacted>","db_pwd":"<redacted>","PWD":"<redacted>","userPasswd":"<redacted>"}`},
		{"R2 private key under a harmless key keeps the key's shape", `{"privateKey":{"kty":"RSA","d":"secret-d"}}`, `{"privateKey":{"kty":"<redacted>","d":"<redacted>"}}`},

		// String values that are JSON.
		{"R2 token inside Codex arguments", `{"params":{"rawInput":{"name":"fetch","arguments":"{\"url\":\"https://api.example.com\",\"token\":\"abc123\"}"}}}`,
			`{"params":{"rawInput":{"name":"fetch","arguments":"{\"url\":\"https://api.example.com\",\"token\":\"<redacted>\"}"}}}`},
		{"R2 JSON inside JSON inside a string", `{"a":"{\"b\":\"{\\\"password\\\":\\\"hunter2\\\"}\"}"}`, `{"a":"{\"b\":\"{\\\"password\\\":\\\"<redacted>\\\"}\"}"}`},
		{"R2 JSON array string", `{"arguments":"[{\"apiKey\":\"k\"}, 1]"}`, `{"arguments":"[{\"apiKey\":\"<redacted>\"}, 1]"}`},
		{"R2 JSON string with env map", `{"arguments":" {\"env\":{\"GH\":\"v\"}} "}`, `{"arguments":" {\"env\":{\"GH\":\"<redacted>\"}} "}`},
		{"R2 JSON string spacing and escapes", `{"arguments":"{\n  \"secret\": \"s\",\n  \"path\": \"a\/b\"\n}"}`, `{"arguments":"{\n  \"secret\": \"<redacted>\",\n  \"path\": \"a/b\"\n}"}`},
		{"R2 JSON snippet in prose", `{"text":"Set {\"apiKey\": \"abc\"} in config.json"}`, `{"text":"Set {\"apiKey\": \"<redacted>\"} in config.json"}`},
		{"R2 cut-off JSON in a string", `{"output":"{\"token\":\"abc"}`, `{"output":"{\"token\":\"<redacted>\""}`},
		{"R2 JSON string without a secret is untouched", `{"arguments":"{\"command\":[\"ls\",\"-la\"],\"workdir\":\"\/w\"}"}`, `{"arguments":"{\"command\":[\"ls\",\"-la\"],\"workdir\":\"\/w\"}"}`},

		// Credentials inside any string.
		{"R2 Authorization Basic", `{"text":"curl -H 'Authorization: Basic dXNlcjpodW50ZXIy' https://x"}`, `{"text":"curl -H 'Authorization: Basic <redacted>' https://x"}`},
		{"R2 basic any case", `{"text":"basic dXNlcjpodW50ZXIy"}`, `{"text":"basic <redacted>"}`},
		{"R2 Basic prose kept", `{"text":"Basic settings are basic: Basic Auth"}`, `{"text":"Basic settings are basic: Basic Auth"}`},
		{"R2 Bearer", `{"text":"Authorization: Bearer abc.def-ghi_jkl"}`, `{"text":"Authorization: Bearer <redacted>"}`},
		{"R2 Bearer prose kept", `{"text":"Bearer tokens and bearer authentication"}`, `{"text":"Bearer tokens and bearer authentication"}`},
		{"R2 URL password", `{"text":"cloning https://user:s3cret@github.com/x.git now"}`, `{"text":"cloning https://user:<redacted>@github.com/x.git now"}`},
		{"R2 URL password with escaped slashes", `{"url":"https:\/\/user:s3cret@host\/x"}`, `{"url":"https://user:<redacted>@host/x"}`},
		{"R2 URL without password kept", `{"url":"https://user@host/x?a=b:c"}`, `{"url":"https://user@host/x?a=b:c"}`},

		// Token shapes inside any string value.
		{"R2 OpenAI key in a message", `{"text":"my key is sk-proj-abcdefghijklmnop1234, ok"}`, `{"text":"my key is <redacted>, ok"}`},
		{"R2 GitHub token after an escaped newline", `{"text":"line\nghp_abcdefghijklmnopqrstuvwxyz0123456789"}`, `{"text":"line\n<redacted>"}`},
		{"R2 token spelled with an escape", `{"text":"\u0073k-proj-abcdefghijklmnop1234"}`, `{"text":"<redacted>"}`},
		{"R2 AWS Google Slack JWT", `["AKIAIOSFODNN7EXAMPLE","AIzaSyA1b2C3d4E5f6G7h8I9j0K_lMnOpQrStUv","xoxb-1234567890-abcdefghij","eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.sig"]`,
			`["<redacted>","<redacted>","<redacted>","<redacted>"]`},
		{"R2 PEM private key in file content", `{"content":"a\n-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n-----END RSA PRIVATE KEY-----\nb"}`, `{"content":"a\n<redacted>\nb"}`},
		{"R2 token in an array under a harmless key", `{"args":["--x","ghp_abcdefghijklmnopqrstuvwxyz0123456789"]}`, `{"args":["--x","<redacted>"]}`},
		{"R2 a shape found after a near miss", `{"text":"sk-x, basic idea, Basic dXNlcjpodW50ZXIy, https://h/ https://u:p@h/ sk-proj-abcdefghijklmnop1234"}`,
			`{"text":"sk-x, basic idea, Basic <redacted>, https://h/ https://u:<redacted>@h/ <redacted>"}`},
		{"R2 keys are not values", `{"sk-proj-abcdefghijklmnop1234":1}`, `{"sk-proj-abcdefghijklmnop1234":1}`},
		{"R2 prose with markers kept", `{"text":"the task-runner is basic; see https://example.com/x and eyJ"}`, `{"text":"the task-runner is basic; see https://example.com/x and eyJ"}`},
	})
}

// TestRedactR2DeeplyEncodedJSON: JSON encoded into a string again and
// again is decoded and redacted maxEncodedDepth levels deep (R2); below
// that, the text rules still find the token shapes, and the cost stays
// linear (at most maxEncodedDepth passes).
func TestRedactR2DeeplyEncodedJSON(t *testing.T) {
	for _, levels := range []int{1, 3, maxEncodedDepth, maxEncodedDepth + 3} {
		inner := `{"password":"hunter2","note":"sk-proj-abcdefghijklmnop1234"}`
		for range levels {
			inner = `{"a":` + string(rawjson.AppendString(nil, inner)) + `}`
		}
		got := Redact([]byte(inner))
		if !json.Valid(got) || bytes.Contains(got, []byte("sk-proj")) {
			t.Fatalf("%d levels: %.300s", levels, got)
		}
		if levels <= maxEncodedDepth && bytes.Contains(got, []byte("hunter2")) {
			t.Fatalf("%d levels: the password is left: %.300s", levels, got)
		}
	}
}

// TestRedactTextR2Strengthened: the same shapes in lines that are not
// valid JSON (cut-off frames, non-JSON lines, stderr).
func TestRedactTextR2Strengthened(t *testing.T) {
	checkRedactText(t, []redactCase{
		{"R2 Basic", `Authorization: Basic dXNlcjpodW50ZXIy`, `Authorization: Basic <redacted>`},
		{"R2 private_key pair", `{"private_key":"abc`, `{"private_key":"<redacted>"`},
		{"R2 privateKey pair", `{"privateKey":"abc","x":1,`, `{"privateKey":"<redacted>","x":1,`},
		{"R2 passwd pair", `{"passwd" : "abc",,`, `{"passwd" : "<redacted>",,`},
		{"R2 keyboard pair kept", `{"keyboard":"us",`, `{"keyboard":"us",`},
		{"R2 PEM", "key: -----BEGIN OPENSSH PRIVATE KEY-----\\nb3BlbnNzaC1rZXk\\n-----END OPENSSH PRIVATE KEY----- done", "key: <redacted> done"},
		{"R2 PEM cut off", "-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC", "<redacted>"},
		{"R2 URL password with escaped slashes", `{"u":"https:\/\/u:p4ss@h\/x"`, `{"u":"https://u:<redacted>@h/x"`}, // decoded and encoded again, as in a valid frame
		{"R2 Bearer prose kept", `Bearer authentication is used`, `Bearer authentication is used`},
		{"R2 Bearer word as a header value", `Authorization: Bearer abcdefghijkl`, `Authorization: Bearer <redacted>`},
		{"R2 Bearer word as a setting", `auth="bearer abcdefghijkl"`, `auth="bearer <redacted>"`},
		{"R2 public certificate kept", "-----BEGIN CERTIFICATE-----\\nMIIB", "-----BEGIN CERTIFICATE-----\\nMIIB"},
	})
}

// TestCaptureWriterR2Strengthened: the four kinds of secret a review
// found in captures are gone from what the capture writer writes.
func TestCaptureWriterR2Strengthened(t *testing.T) {
	frames := []string{
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"c","rawInput":{"arguments":"{\"token\":\"tok-in-arguments\"}"}}}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"update":{"content":{"type":"text","text":"Authorization: Basic dXNlcjpiYXNpYy1zZWNyZXQ="}}}}`,
		`{"jsonrpc":"2.0","id":3,"result":{"private_key":"pk-underscore","privateKey":"pk-camel"}}`,
		`{"jsonrpc":"2.0","id":4,"result":{"content":"remote = https://me:url-password@git.example.com/r.git"}}`,
	}
	var buf bytes.Buffer
	cw := NewCaptureWriter(&buf, false)
	for _, f := range frames {
		cw.Write(Record{From: Agent, Frame: []byte(f)})
	}
	if err := cw.Close(); err != nil {
		t.Fatal(err)
	}
	// dXNlcjpiYXNpYy1zZWNyZXQ= is user:basic-secret.
	for _, secret := range []string{"tok-in-arguments", "dXNlcjpiYXNpYy1zZWNyZXQ", "pk-underscore", "pk-camel", "url-password"} {
		if strings.Contains(buf.String(), secret) {
			t.Errorf("capture leaks %q:\n%s", secret, buf.String())
		}
	}
}

// TestSecretInitials: secretInitials has the first letter of every
// secret word (containsSecretWord tries words only at those).
func TestSecretInitials(t *testing.T) {
	for _, w := range secretWords {
		if !strings.Contains(secretInitials, w[:1]) {
			t.Errorf("secretInitials lacks %q (of %q)", w[:1], w)
		}
	}
}

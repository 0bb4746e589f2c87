package pipe

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
)

// redactInPieces runs text through a TextRedactor in pieces cut at cuts.
func redactInPieces(t testing.TB, text []byte, cuts []int) []byte {
	t.Helper()
	var out []byte
	tr := NewTextRedactor(func(b []byte) error { out = append(out, b...); return nil })
	prev := 0
	for _, c := range cuts {
		c = min(max(c, prev), len(text))
		if err := tr.Write(text[prev:c]); err != nil {
			t.Fatal(err)
		}
		prev = c
	}
	if err := tr.Write(text[prev:]); err != nil {
		t.Fatal(err)
	}
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
	return out
}

// streamSecrets are secrets a streamed frame may carry, with the part of
// each that must not reach the capture.
var streamSecrets = []struct{ name, text, secret string }{
	{"a token", `sk-proj-` + strings.Repeat("A1b2C3d4", 6), strings.Repeat("A1b2C3d4", 6)},
	{"a github token", `ghp_` + strings.Repeat("x9Y8", 9), strings.Repeat("x9Y8", 9)},
	{"a secret pair", `"api_key": "hunter2-correct-horse"`, "hunter2-correct-horse"},
	{"an escaped pair", `\"password\":\"battery-staple-42\"`, "battery-staple-42"},
	{"a bearer header", `Authorization: Bearer abcdefghijklmnopqrstuvwxyz012345`, "abcdefghijklmnopqrstuvwxyz012345"},
	{"a pem key", "-----BEGIN RSA PRIVATE KEY-----\\n" + strings.Repeat("MIIEpAIBAAKCAQEA7x", 60) + "\\n-----END RSA PRIVATE KEY-----", strings.Repeat("MIIEpAIBAAKCAQEA7x", 3)},
}

// longText is a streamed message chunk of about n bytes with secret at
// offset at of its text.
func longText(n, at int, secret string) []byte {
	head := `{"jsonrpc":"2.0","method":"session/update","params":{"update":{"content":{"text":"`
	var b bytes.Buffer
	b.WriteString(head)
	filler := `some text \"quoted\" naïve 日本語 C:\\path `
	for b.Len() < len(head)+at {
		b.WriteString(filler)
	}
	b.WriteString(" " + secret + " ")
	for b.Len() < n {
		b.WriteString(filler)
	}
	b.WriteString(`"}}}}`)
	return b.Bytes()
}

// TestTextRedactorAcrossPieces: a secret split across two pieces, at
// every offset around the redactor's chunk boundary, is caught, and a text
// without secrets passes byte for byte (P1 for the capture).
func TestTextRedactorAcrossPieces(t *testing.T) {
	for _, s := range streamSecrets {
		t.Run(s.name, func(t *testing.T) {
			text := longText(3*streamChunk, streamChunk+100, s.text)
			at := bytes.Index(text, []byte(s.text))
			for _, cut := range []int{at - 1, at, at + 1, at + len(s.text)/2, at + len(s.text) - 1, at + len(s.text)} {
				got := redactInPieces(t, text, []int{cut - 70000, cut, cut + 3})
				if bytes.Contains(got, []byte(s.secret)) {
					t.Fatalf("cut at %d of the secret at %d: the secret is in the capture", cut-at, at)
				}
			}
		})
	}
	clean := longText(2*streamChunk+streamCarry+7, 10, "nothing")
	if got := redactInPieces(t, clean, []int{1, streamChunk, streamChunk + 1}); !bytes.Equal(got, clean) {
		t.Fatal("a text without secrets changed")
	}
}

// FuzzTextRedactor: a secret planted anywhere in a long text, the text cut
// into pieces anywhere, never reaches the output, and pieces give what
// the whole text gives.
func FuzzTextRedactor(f *testing.F) {
	f.Add(uint8(0), uint32(1000), uint32(7), uint64(1))
	f.Add(uint8(3), uint32(streamChunk), uint32(streamChunk+streamCarry), uint64(2))
	f.Fuzz(func(t *testing.T, which uint8, at, cut uint32, seed uint64) {
		s := streamSecrets[int(which)%len(streamSecrets)]
		n := 2*streamChunk + streamCarry + 4096
		text := longText(n, int(at)%n, s.text)
		rng := rand.New(rand.NewPCG(seed, 1))
		cuts := []int{int(cut) % len(text)}
		for range 4 {
			cuts = append(cuts, cuts[len(cuts)-1]+rng.IntN(300<<10))
		}
		got := redactInPieces(t, text, cuts)
		if bytes.Contains(got, []byte(s.secret)) {
			t.Fatalf("%s at %d, cut at %v: the secret is in the output", s.name, at, cuts)
		}
		if whole := redactInPieces(t, text, nil); !bytes.Equal(got, whole) {
			t.Fatalf("%s at %d, cut at %v: pieces give another text than the whole", s.name, at, cuts)
		}
	})
}

package pipe

import (
	"fmt"
	"strings"
	"testing"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
)

// BenchmarkRedactHostile: frames built to make redaction super-linear
// (R2 must hold at pipe speed on hostile input). Compare MB/s across
// sizes: linear work keeps it flat. "pem-blocks" is a string of many
// complete PEM private key blocks, and no quote after them: each block's
// search for where it ends once looked at the whole rest of the string
// (182 ms for 1 MiB, 15 times the 256 KiB time).
func BenchmarkRedactHostile(b *testing.B) {
	const pem = "-----BEGIN RSA PRIVATE KEY-----x-----END RSA PRIVATE KEY-----\n"
	cases := []struct {
		name string
		unit string
		json bool
	}{
		{"pem-blocks", pem, true},
		{"pem-cut-off-raw", `-----BEGIN RSA PRIVATE KEY-----"`, false},
		{"escaped-pairs-raw", `"a":"{\"token\":\"x\"}",`, false},
		{"pem-in-encoded-json", `{\"k\":\"` + strings.ReplaceAll(pem, "\n", `\\n`) + `\"},`, true},
	}
	for _, c := range cases {
		for _, size := range []int{256 << 10, 1 << 20, 4 << 20} {
			s := strings.Repeat(c.unit, size/len(c.unit))
			frame := []byte(s)
			if c.json {
				frame = []byte(`{"a":` + string(rawjson.AppendString(nil, s)) + `}`)
			}
			b.Run(fmt.Sprintf("%s/%dKiB", c.name, size>>10), func(b *testing.B) {
				b.SetBytes(int64(len(frame)))
				for b.Loop() {
					if c.json {
						Redact(frame)
					} else {
						redactTextBytes(frame, 0)
					}
				}
			})
		}
	}
}

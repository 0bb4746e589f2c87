package pipe

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
)

// redactBenchFrames are large frames of the shapes a capture sees most: a
// long message text (prose dense with links and hyphens), a file read
// (this repository's README, Markdown with code), a listing of many small
// strings, and a tool call whose arguments are a JSON-encoded string
// (Codex). None holds a secret: the cost measured is the search.
func redactBenchFrames() []struct {
	name  string
	frame []byte
} {
	prose := strings.Repeat("The basic idea: fetch https://github.com/acp-normalize/acp-normalize#readme, then ask the high-level task-runner why it might be right. ", 8000)
	var listing strings.Builder
	listing.WriteString(`{"jsonrpc":"2.0","id":7,"result":{"entries":[`)
	for i := range 20000 {
		if i > 0 {
			listing.WriteByte(',')
		}
		fmt.Fprintf(&listing, `{"path":"src/pkg%d/file%d.go","kind":"file","size":%d}`, i%97, i, i*13)
	}
	listing.WriteString(`]}}`)
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		panic(err)
	}
	var doc []byte
	for len(doc) < 1<<20 {
		doc = append(doc, readme...)
	}
	args := `{"command":["bash","-lc","` + strings.Repeat(`grep -rn \"func main\" ./cmd | head -n 20; `, 20000) + `"],"workdir":"/work"}`
	return []struct {
		name  string
		frame []byte
	}{
		{"message-1MiB", []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":` + string(rawjson.AppendString(nil, prose)) + `}}}}`)},
		{"readme-1MiB", []byte(`{"jsonrpc":"2.0","id":3,"result":{"content":` + string(rawjson.AppendString(nil, string(doc))) + `}}`)},
		{"listing-20k-strings", []byte(listing.String())},
		{"codex-arguments-1MiB", []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call","toolCallId":"c1","rawInput":{"name":"shell","arguments":` + string(rawjson.AppendString(nil, args)) + `}}}}`)},
	}
}

// BenchmarkRedactLargeFrame: what redaction costs the capture writer per
// large frame (R2).
func BenchmarkRedactLargeFrame(b *testing.B) {
	for _, bf := range redactBenchFrames() {
		b.Run(bf.name, func(b *testing.B) {
			b.SetBytes(int64(len(bf.frame)))
			b.ReportAllocs()
			for b.Loop() {
				Redact(bf.frame)
			}
		})
	}
}

// BenchmarkRedactTextLarge: a 1 MiB line that is not valid JSON (a long
// message frame cut off at EOF) through the text rules.
func BenchmarkRedactTextLarge(b *testing.B) {
	frame := string(redactBenchFrames()[0].frame)
	line := frame[:len(frame)-10]
	b.SetBytes(int64(len(line)))
	for b.Loop() {
		RedactText(line)
	}
}

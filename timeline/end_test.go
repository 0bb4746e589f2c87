package timeline

import (
	"bytes"
	"strings"
	"testing"

	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/rewrite/rewritetest"
)

// TestPrettyEnd: the pretty timeline says where a capture ends when it has
// no exit record (the proxy was killed before writing one), and says
// nothing more after an exit record.
func TestPrettyEnd(t *testing.T) {
	const cutOff = "capture ends here (no exit record: the proxy was killed?)"
	tests := []struct {
		name, capture string
		wantEnd       bool
	}{
		{"cut off after a request", "testdata/cut-off.jsonl", true},
		{"cut off without timestamps", "testdata/no-timestamps.jsonl", true},
		{"ends with an exit record", "testdata/session.jsonl", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			render(t, NewPretty(&buf, Options{}), []rewrite.Module{rewritetest.Module()}, tt.capture)
			lines := strings.Split(strings.TrimRight(buf.String(), "\n"), "\n")
			last := lines[len(lines)-1]
			if got := strings.Contains(last, cutOff); got != tt.wantEnd {
				t.Errorf("last line %q: contains %q = %v, want %v", last, cutOff, got, tt.wantEnd)
			}
			if n := strings.Count(buf.String(), cutOff); n > 1 {
				t.Errorf("end line written %d times", n)
			}
		})
	}
}

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
	const (
		killed = "capture ends here (no exit record: the proxy was killed?)"
		ends   = "capture ends here (no exit record)"
	)
	tests := []struct {
		name, capture string
		cutOff        string // the end line wanted, "" for none
	}{
		{"recording cut off after a request", "testdata/cut-off.jsonl", killed},
		{"frames-only capture, no start event", "testdata/no-timestamps.jsonl", ends},
		{"ends with an exit record", "testdata/session.jsonl", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			render(t, NewPretty(&buf, Options{}), []rewrite.Module{rewritetest.Module()}, tt.capture)
			lines := strings.Split(strings.TrimRight(buf.String(), "\n"), "\n")
			last := lines[len(lines)-1]
			hasEnd := strings.Contains(last, ends)
			if tt.cutOff == "" && hasEnd || tt.cutOff != "" && !strings.HasSuffix(strings.TrimSpace(last), tt.cutOff) {
				t.Errorf("last line %q, want it to end with %q", last, tt.cutOff)
			}
			if n := strings.Count(buf.String(), ends); n > 1 {
				t.Errorf("end line written %d times", n)
			}
		})
	}
}

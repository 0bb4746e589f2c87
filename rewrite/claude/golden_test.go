package claude_test

import (
	"testing"

	"github.com/acp-normalize/acp-normalize/rewrite/claude"
	"github.com/acp-normalize/acp-normalize/route/routetest"
)

// TestGolden runs each testdata/golden/*.txtar case through a Router with
// the claude module (routetest.RunGolden: input.jsonl, output.jsonl
// compared byte for byte, the hand-written snapshots.json and
// parents.json, the invariants every module keeps). The case's name cites
// the rule it pins (TestGolden/L3_toolresponse_first).
func TestGolden(t *testing.T) {
	routetest.Golden(t, claude.Module())
}

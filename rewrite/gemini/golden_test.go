package gemini_test

import (
	"testing"

	"github.com/acp-normalize/acp-normalize/rewrite/gemini"
	"github.com/acp-normalize/acp-normalize/route/routetest"
)

// TestGolden runs each testdata/golden/*.txtar case through a Router with
// the gemini module (routetest.Golden: input.jsonl, output.jsonl compared byte
// for byte, the hand-written snapshots.json, the ACP schema check on every
// frame the module writes). The case's name cites the rule it pins.
func TestGolden(t *testing.T) {
	routetest.Golden(t, gemini.Module())
}

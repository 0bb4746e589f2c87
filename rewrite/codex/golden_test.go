package codex_test

import (
	"testing"

	"github.com/acp-normalize/acp-normalize/rewrite/codex"
	"github.com/acp-normalize/acp-normalize/rewrite/moduletest"
)

// TestGolden runs each testdata/golden/*.txtar case through a Router with
// the codex module (moduletest.Golden: input.jsonl, output.jsonl compared byte
// for byte, the hand-written snapshots.json, the ACP schema check on every
// frame the module writes). The case's name cites the rule it pins.
func TestGolden(t *testing.T) {
	moduletest.Golden(t, codex.Module())
}

package codex_test

import (
	"testing"

	"github.com/acp-normalize/acp-normalize/proxy/proxytest"
	"github.com/acp-normalize/acp-normalize/rewrite/codex"
)

// TestGolden runs each testdata/golden/*.txtar case through a Router with
// the codex module (proxytest.Golden: input.jsonl, output.jsonl compared byte
// for byte, the hand-written snapshots.json, the ACP schema check on every
// frame the module writes). The case's name cites the rule it pins.
func TestGolden(t *testing.T) {
	proxytest.Golden(t, codex.Module())
}

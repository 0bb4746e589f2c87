package qwen_test

import (
	"testing"

	"github.com/acp-normalize/acp-normalize/proxy/proxytest"
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/rewrite/methods"
	"github.com/acp-normalize/acp-normalize/rewrite/qwen"
)

// TestGolden runs testdata/golden/*.txtar (see proxytest.RunGolden)
// through the qwen module and the methods module, as the proxy lists them.
// A case runs with the settings of its "options:" line (--vendor qwen).
func TestGolden(t *testing.T) {
	proxytest.RunGolden(t, func(string) []rewrite.Module {
		return []rewrite.Module{qwen.Module(), methods.Module()}
	})
}

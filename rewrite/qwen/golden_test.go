package qwen_test

import (
	"testing"

	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/rewrite/methods"
	"github.com/acp-normalize/acp-normalize/rewrite/qwen"
	"github.com/acp-normalize/acp-normalize/route/routetest"
)

// TestGolden runs testdata/golden/*.txtar (see routetest.RunGolden)
// through the qwen module and the methods module, as the proxy lists them.
// A case runs with the settings of its "options:" line (--vendor qwen).
func TestGolden(t *testing.T) {
	routetest.RunGolden(t, func(string) []rewrite.Module {
		return []rewrite.Module{qwen.Module(), methods.Module()}
	})
}

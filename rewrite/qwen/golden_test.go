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
// A case whose name ends in "_vendor_flag" runs with --vendor qwen.
func TestGolden(t *testing.T) {
	proxytest.RunGolden(t, func(name string) []rewrite.Module {
		mods := []rewrite.Module{qwen.Module(), methods.Module()}
		if proxytest.HasSuffix(name, "_vendor_flag") {
			mods = rewrite.Configure(mods, rewrite.Settings{rewrite.VendorOption: qwen.Name})
		}
		return mods
	})
}

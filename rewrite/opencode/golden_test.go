package opencode_test

import (
	"testing"

	"github.com/acp-normalize/acp-normalize/proxy/proxytest"
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/rewrite/opencode"
)

// TestGolden runs testdata/golden/*.txtar (see proxytest.RunGolden)
// through the opencode module. A case whose name ends in "_vendor_flag"
// runs with --vendor opencode.
func TestGolden(t *testing.T) {
	proxytest.RunGolden(t, func(string) []rewrite.Module {
		return []rewrite.Module{opencode.Module()}
	})
}

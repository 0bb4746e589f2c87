package opencode_test

import (
	"testing"

	"github.com/acp-normalize/acp-normalize/rewrite/opencode"
	"github.com/acp-normalize/acp-normalize/route/routetest"
)

// TestGolden runs each testdata/golden/*.txtar case through a Router with
// the opencode module (routetest.Golden; a case's "options:" line gives
// its settings, such as vendor=opencode). The case's name cites the rule
// it pins.
func TestGolden(t *testing.T) {
	routetest.Golden(t, opencode.Module())
}

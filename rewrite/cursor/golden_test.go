package cursor_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/rewrite/cursor"
	"github.com/acp-normalize/acp-normalize/route/routetest"
)

// TestGolden runs each testdata/golden/*.txtar case through a Router with
// the cursor module (routetest.RunGolden: input.jsonl, output.jsonl
// compared byte for byte, the invariants every module keeps), and checks
// C1/C13 on every frame it writes. The case's name cites the rule it pins.
func TestGolden(t *testing.T) {
	routetest.Golden(t, cursor.Module(), noCursorMethods)
}

// noCursorMethods fails a frame the module wrote to the client with a
// cursor/ method, unless the case forwards unknown vendor methods (C1,
// C13).
func noCursorMethods(t *testing.T, opts routetest.CaseOptions, o routetest.Output) {
	t.Helper()
	if o.Op == "" || o.To != pipe.Client || opts.Settings.Bool(rewrite.ForwardUnknownVendorMethods) {
		return
	}
	var msg struct {
		Method string `json:"method"`
	}
	_ = json.Unmarshal(o.Frame, &msg)
	if strings.HasPrefix(strings.TrimPrefix(msg.Method, "_"), "cursor/") {
		t.Errorf("C1/C13: %s reached the client: %s", msg.Method, o.Frame)
	}
}

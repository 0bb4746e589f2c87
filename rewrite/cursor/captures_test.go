package cursor_test

import (
	"path/filepath"
	"testing"

	"github.com/acp-normalize/acp-normalize/rewrite/cursor"
	"github.com/acp-normalize/acp-normalize/route/routetest"
)

// capturesDir holds the Cursor captures, hand-written from documented
// frames (testdata/captures/README.md); their replays through the whole
// module list are pinned by cmd/acp-normalize's TestCursorCaptures.
var capturesDir = filepath.Join("..", "..", "testdata", "captures", "cursor")

// TestCapturesDifferential: every recording, re-encoded and
// with duplicate keys, gets the same verdicts and snapshots.
func TestCapturesDifferential(t *testing.T) {
	routetest.CheckCapturesDifferential(t, capturesDir, cursor.Module())
}

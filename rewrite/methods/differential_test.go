package methods_test

import (
	"testing"

	"github.com/acp-normalize/acp-normalize/rewrite/methods"
	"github.com/acp-normalize/acp-normalize/route/routetest"
)

// FuzzMethodsDifferential: a session, the same session with every
// frame spelled otherwise (blanks, escaped key and value characters,
// reordered members) and the same session with decoy members before some
// members under the same key (a parser reads the last one) get the same
// verdicts and snapshots, frame for frame. Seeds: the golden cases.
func FuzzMethodsDifferential(f *testing.F) {
	routetest.FuzzDifferential(f, "", methods.Module())
}

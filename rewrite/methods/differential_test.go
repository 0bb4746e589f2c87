package methods_test

import (
	"testing"

	"github.com/acp-normalize/acp-normalize/proxy/proxytest"
	"github.com/acp-normalize/acp-normalize/rewrite/methods"
)

// FuzzMethodsReencoded (issue 14): a session and the same session with every
// frame spelled otherwise (blanks, escaped key and value characters,
// reordered members) get the same verdicts and snapshots, frame for frame.
func FuzzMethodsReencoded(f *testing.F) {
	proxytest.FuzzReencoded(f, "", "", methods.Module())
}

// FuzzMethodsDuplicateKeys (issue 14): a session and the same session with
// decoy members spliced in before some members, under the same key (a
// parser reads the last one), get the same verdicts and snapshots.
func FuzzMethodsDuplicateKeys(f *testing.F) {
	proxytest.FuzzDuplicateKeys(f, "", "", methods.Module())
}

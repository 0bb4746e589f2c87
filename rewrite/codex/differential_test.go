package codex_test

import (
	"path/filepath"
	"testing"

	"github.com/acp-normalize/acp-normalize/proxy/proxytest"
	"github.com/acp-normalize/acp-normalize/rewrite/codex"
)

// recordings holds every vendor's real recordings: the small ones are fuzz
// seeds, and TestCapturesDifferential checks each once.
var recordings = filepath.Join("..", "..", "testdata", "captures")

// TestCapturesDifferential (issue 14): every real recording, re-encoded
// and with duplicate keys, gets the same verdicts and snapshots.
func TestCapturesDifferential(t *testing.T) {
	proxytest.CheckCapturesDifferential(t, recordings, "codex", codex.Module())
}

// FuzzCodexReencoded (issue 14): a session and the same session with every
// frame spelled otherwise (blanks, escaped key and value characters,
// reordered members) get the same verdicts and snapshots, frame for frame.
func FuzzCodexReencoded(f *testing.F) {
	proxytest.FuzzReencoded(f, recordings, "codex", codex.Module())
}

// FuzzCodexDuplicateKeys (issue 14): a session and the same session with
// decoy members spliced in before some members, under the same key (a
// parser reads the last one), get the same verdicts and snapshots.
func FuzzCodexDuplicateKeys(f *testing.F) {
	proxytest.FuzzDuplicateKeys(f, recordings, "codex", codex.Module())
}

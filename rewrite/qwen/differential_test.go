package qwen_test

import (
	"path/filepath"
	"testing"

	"github.com/acp-normalize/acp-normalize/proxy/proxytest"
	"github.com/acp-normalize/acp-normalize/rewrite/qwen"
)

// recordings holds every vendor's real recordings; those up to maxSeed
// bytes are fuzz seeds (a larger seed stalls the fuzzer), every one is
// checked by TestCapturesDifferential.
var recordings = filepath.Join("..", "..", "testdata", "captures")

const maxSeed = 16 << 10

// TestCapturesDifferential (issue 14): every real recording, re-encoded
// and with duplicate keys, gets the same verdicts and snapshots.
func TestCapturesDifferential(t *testing.T) {
	proxytest.CheckCapturesDifferential(t, recordings, "qwen", qwen.Module())
}

// seedHows are the re-encodings every seed session is tried with: all
// changes at once, and each alone.
var seedHows = []uint64{proxytest.AllChanges, proxytest.Blanks | 1<<8, proxytest.EscapeKeys | proxytest.EscapeValues | 2<<8, proxytest.Reorder | 3<<8}

// FuzzQwenReencoded (issue 14): a session and the same session with every
// frame spelled otherwise (blanks, escaped key and value characters,
// reordered members) get the same verdicts and snapshots, frame for frame.
// Seeds: the golden cases and the small real recordings.
func FuzzQwenReencoded(f *testing.F) {
	proxytest.AddSeeds(f, recordings, "qwen", maxSeed, seedHows...)
	f.Fuzz(func(t *testing.T, session []byte, how uint64) {
		proxytest.CheckReencoded(t, proxytest.ParseLines(session), how, qwen.Module())
	})
}

// FuzzQwenDuplicateKeys (issue 14): a session and the same session with
// decoy members spliced in before some members, under the same key (a
// parser reads the last one), get the same verdicts and snapshots.
func FuzzQwenDuplicateKeys(f *testing.F) {
	proxytest.AddSeeds(f, recordings, "qwen", maxSeed, seedHows...)
	f.Fuzz(func(t *testing.T, session []byte, how uint64) {
		proxytest.CheckDuplicateKeys(t, proxytest.ParseLines(session), how, qwen.Module())
	})
}

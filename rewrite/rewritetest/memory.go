package rewritetest

import (
	"bytes"
	"runtime"
	"strings"
	"testing"

	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite"
)

// LaunchPrompt returns a prompt of about n bytes that needs JSON escapes
// (quotes and newlines), as real prompts do.
func LaunchPrompt(n int) string {
	line := "Count the files under ./proxy and say \"why\".\n"
	return strings.Repeat(line, n/len(line)+1)[:n]
}

// AllocatedBy returns the bytes the heap allocated while fn ran (an upper
// bound of how much fn grew the heap at its peak).
func AllocatedBy(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// JSONText returns s as a JSON string.
func JSONText(s string) []byte {
	var b bytes.Buffer
	b.Grow(len(s) + len(s)/8 + 2)
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\n':
			b.WriteString(`\n`)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.Bytes()
}

// CheckRewriteCost rewrites one agent frame with a fresh connection of
// mod (with settings) and fails the test when the rewrite allocated more than maxFactor
// times the frame (a frame costs a small constant times its
// size). It returns the rewritten frame.
func CheckRewriteCost(t *testing.T, mod rewrite.Module, settings rewrite.Settings, frame []byte, maxFactor float64) []byte {
	t.Helper()
	rw := mod.New(rewrite.Env{Settings: settings})
	var v rewrite.Verdict
	var err error
	alloc := AllocatedBy(func() { v, err = rw.Rewrite(rewrite.NewFrame(pipe.Agent, frame, 1)) })
	if err != nil || v.Frame == nil {
		t.Fatalf("frame not rewritten: %v", err)
	}
	factor := float64(alloc) / float64(len(frame))
	t.Logf("frame %d MiB, output %d MiB, allocated %d MiB (%.1f× the frame)", len(frame)>>20, len(v.Frame)>>20, alloc>>20, factor)
	if factor > maxFactor {
		t.Errorf("rewriting a %d MiB frame allocated %.1f× its size, want at most %.1f×", len(frame)>>20, factor, maxFactor)
	}
	return v.Frame
}

// LargePromptSize is the prompt size of memory tests: 16 MiB, 2 MiB under
// the race detector (which makes large frames slow).
func LargePromptSize() int {
	if Race {
		return 2 << 20
	}
	return 16 << 20
}

// LargeText is the JSON string of a launch call's large text (LaunchPrompt
// of LargePromptSize bytes) for a memory test, which -short skips (it
// allocates a few hundred MiB).
func LargeText(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("allocates a few hundred MiB")
	}
	return string(JSONText(LaunchPrompt(LargePromptSize())))
}

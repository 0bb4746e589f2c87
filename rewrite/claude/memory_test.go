package claude_test

import (
	"testing"

	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/proxy"
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/rewrite/rewritetest"
)

// TestLargeLaunchCallMemory pins issue 8 item 8 for Claude: the enriched
// frame holds the prompt twice (rawInput and the M snapshot); the rewrite
// may allocate at most maxFactor times the frame: that output, the decoded
// prompt and the snapshot.
func TestLargeLaunchCallMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates a few hundred MiB")
	}
	size := 16 << 20
	if rewritetest.Race {
		size = 2 << 20 // the race detector makes large frames slow
	}
	const maxFactor = 4.5
	frame := launchFrame("s", "t1", "tool_call", `{"description":"count","subagent_type":"general","prompt":`+
		string(rewritetest.JSONText(rewritetest.LaunchPrompt(size)))+`}`)
	r, err := proxy.NewRouter(proxy.RouterConfig{Modules: []rewrite.Module{claudeModule()}})
	if err != nil {
		t.Fatal(err)
	}
	var outs []proxy.Out
	alloc := rewritetest.AllocatedBy(func() { outs = r.Handle(pipe.Agent, frame, nil) })
	if len(outs) != 1 || outs[0].Op != "replace" {
		t.Fatalf("outputs: %d", len(outs))
	}
	factor := float64(alloc) / float64(len(frame))
	t.Logf("frame %d MiB, output %d MiB, allocated %d MiB (%.1f× the frame)", len(frame)>>20, len(outs[0].Frame)>>20, alloc>>20, factor)
	if factor > maxFactor {
		t.Errorf("rewriting a %d MiB launch call allocated %.1f× its size, want at most %.1f×", len(frame)>>20, factor, maxFactor)
	}
}

package opencode_test

import (
	"testing"

	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/proxy"
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/rewrite/opencode"
	"github.com/acp-normalize/acp-normalize/rewrite/rewritetest"
)

// TestLargeLaunchCallMemory: a launch call of N MiB costs a small
// constant times N (P6, F3): its prompt is decoded once into the
// snapshot and the snapshot spliced once into the frame.
func TestLargeLaunchCallMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates a few hundred MiB")
	}
	size := 16 << 20
	if rewritetest.Race {
		size = 2 << 20 // the race detector makes large frames slow
	}
	const maxFactor = 4.5
	r, err := proxy.NewRouter(proxy.RouterConfig{Modules: []rewrite.Module{opencode.Module()}})
	if err != nil {
		t.Fatal(err)
	}
	r.Handle(pipe.Agent, []byte(`{"jsonrpc":"2.0","id":0,"result":{"agentInfo":{"name":"OpenCode"}}}`), nil)
	r.Handle(pipe.Agent, []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"t1","title":"task","rawInput":{}}}}`), nil)
	frame := []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"in_progress","title":"count","rawInput":{"description":"count","subagent_type":"general","prompt":` + string(rewritetest.JSONText(rewritetest.LaunchPrompt(size))) + `}}}}`)
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

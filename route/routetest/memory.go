package routetest

import (
	"testing"

	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/rewrite/rewritetest"
	"github.com/acp-normalize/acp-normalize/route"
)

// CheckRouteCost routes the client's initialize request and the agent
// frames setup through a Router with mod alone (the initialize result, id
// 0, that names the agent; a launch call's start), then frame, and fails the test unless frame is replaced and
// routing it allocated at most maxFactor times its size (P6, F3: a frame
// costs a small constant times its size). rewritetest.CheckRewriteCost is
// its twin for a module without a router.
func CheckRouteCost(t *testing.T, mod rewrite.Module, setup [][]byte, frame []byte, maxFactor float64) {
	t.Helper()
	r, err := route.NewRouter(route.RouterConfig{Modules: []rewrite.Module{mod}})
	if err != nil {
		t.Fatal(err)
	}
	r.Handle(pipe.Client, []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`), nil)
	for _, s := range setup {
		r.Handle(pipe.Agent, s, nil)
	}
	var outs []route.Out
	alloc := rewritetest.AllocatedBy(func() { outs = r.Handle(pipe.Agent, frame, nil) })
	if len(outs) != 1 || outs[0].Op != pipe.OpReplace {
		t.Fatalf("outputs: %d", len(outs))
	}
	factor := float64(alloc) / float64(len(frame))
	t.Logf("frame %d MiB, output %d MiB, allocated %d MiB (%.1f× the frame)", len(frame)>>20, len(outs[0].Frame)>>20, alloc>>20, factor)
	if factor > maxFactor {
		t.Errorf("rewriting a %d MiB launch call allocated %.1f× its size, want at most %.1f×", len(frame)>>20, factor, maxFactor)
	}
}

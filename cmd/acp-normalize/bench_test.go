package main

// The process-level comparison with cat is cmd/acp-bench (make bench).

import (
	"bytes"
	"testing"

	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/proxy"
	"github.com/acp-normalize/acp-normalize/rewrite/rewritetest"
)

// BenchmarkRouterAllModules routes agent output through the router with
// the real module list: the per-frame cost users pay, triggers included.
func BenchmarkRouterAllModules(b *testing.B) {
	r, err := proxy.NewRouter(proxy.RouterConfig{Modules: allModules(), Version: version})
	if err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		frames int
		every  int // one tool-call frame every N frames
	}{{"chunks", 50, 0}, {"mixed", 1000, 50}} {
		frames := bytes.Split(bytes.TrimSuffix(rewritetest.AgentTraffic(tc.frames), []byte("\n")), []byte("\n"))
		if tc.every == 0 {
			frames = frames[2:] // the chunks between two tool calls, each text different
		}
		var traffic int
		for _, f := range frames {
			traffic += len(f)
		}
		b.Run(tc.name, func(b *testing.B) {
			var outs []proxy.Out
			b.ReportAllocs()
			b.SetBytes(int64(traffic / len(frames)))
			for i := 0; i < b.N; i++ {
				outs = r.Handle(pipe.Agent, frames[i%len(frames)], outs[:0])
			}
		})
	}
}

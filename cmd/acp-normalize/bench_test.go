package main

// The process-level comparison with cat is cmd/acp-bench (make bench).

import (
	"bytes"
	"os"
	"testing"

	"github.com/acp-normalize/acp-normalize/internal/benchharness"
	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/rewrite/rewritetest"
	"github.com/acp-normalize/acp-normalize/route"
)

// BenchmarkRouterAllModules routes agent output through the router with
// the real module list: the per-frame cost users pay, triggers included.
func BenchmarkRouterAllModules(b *testing.B) {
	benchmarkRouter(b, allModules())
}

// BenchmarkRouterNoModules is BenchmarkRouterAllModules with --modules
// none: the difference is what the modules cost per frame.
func BenchmarkRouterNoModules(b *testing.B) {
	benchmarkRouter(b, nil)
}

func benchmarkRouter(b *testing.B, modules []rewrite.Module) {
	r, err := route.NewRouter(route.RouterConfig{Modules: modules, Version: version})
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
			var outs []route.Out
			b.ReportAllocs()
			b.SetBytes(int64(traffic / len(frames)))
			for i := 0; i < b.N; i++ {
				outs = r.Handle(pipe.Agent, frames[i%len(frames)], outs[:0])
			}
		})
	}
}

// BenchmarkRouterMixedSession routes the agent output of acp-bench's mixed
// workload (chunks, tool calls with 1-5 MB file reads, Cursor subagent
// triples, todos, images) through the router, with and without modules:
// the per-frame work of the modules on big frames, without process noise.
func BenchmarkRouterMixedSession(b *testing.B) {
	dir := b.TempDir()
	loads, err := benchharness.Generate(dir, benchharness.Sizes{MixedChunks: 8000, HugeLine: 1 << 10, SmallPings: 1, LargePings: 1}, 1)
	if err != nil {
		b.Fatal(err)
	}
	var data []byte
	for _, w := range loads {
		if w.Name == "mixed" {
			if data, err = os.ReadFile(w.File); err != nil {
				b.Fatal(err)
			}
		}
	}
	frames := bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
	for _, tc := range []struct {
		name    string
		modules []rewrite.Module
	}{{"none", nil}, {"all", allModules()}} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for i := 0; i < b.N; i++ {
				r, err := route.NewRouter(route.RouterConfig{Modules: tc.modules, Version: version})
				if err != nil {
					b.Fatal(err)
				}
				var outs []route.Out
				for _, f := range frames {
					outs = r.Handle(pipe.Agent, f, outs[:0])
				}
			}
		})
	}
}

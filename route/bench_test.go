package route

import (
	"bytes"
	"testing"

	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite/rewritetest"
)

// BenchmarkRouterPassthrough measures the per-frame cost of routing agent
// output with no module claiming it (the hot path).
func BenchmarkRouterPassthrough(b *testing.B) {
	r, err := NewRouter(RouterConfig{Modules: nil})
	if err != nil {
		b.Fatal(err)
	}
	frames := bytes.Split(bytes.TrimSuffix(rewritetest.AgentTraffic(1000), []byte("\n")), []byte("\n"))
	var total int
	for _, f := range frames {
		total += len(f)
	}
	dst := make([]Out, 0, 8)
	b.ReportAllocs()
	b.SetBytes(int64(total / len(frames)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		dst = r.Handle(pipe.Agent, frames[i%len(frames)], dst[:0])
	}
}

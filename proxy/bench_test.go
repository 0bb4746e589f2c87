package proxy

import (
	"bytes"
	"io"
	"testing"

	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite/rewritetest"
	"github.com/acp-normalize/acp-normalize/route"
)

// BenchmarkRelayLoop measures read, route and write of a whole stream in
// memory: what one direction's loop does per frame.
func BenchmarkRelayLoop(b *testing.B) {
	r, err := route.NewRouter(route.RouterConfig{})
	if err != nil {
		b.Fatal(err)
	}
	traffic := rewritetest.AgentTraffic(10_000)
	b.ReportAllocs()
	b.SetBytes(int64(len(traffic)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rd := pipe.NewReader(bytes.NewReader(traffic))
		w := pipe.NewWriter(io.Discard)
		var outs []route.Out
		for {
			f, err := rd.ReadFrame()
			if err != nil {
				break
			}
			outs = r.Handle(pipe.Agent, f, outs[:0])
			for _, o := range outs {
				_ = w.WriteFrame(o.Frame, rd.Buffered() == 0)
			}
		}
		_ = w.Flush()
	}
	b.ReportMetric(float64(b.N)*10_000/b.Elapsed().Seconds(), "frames/s")
}

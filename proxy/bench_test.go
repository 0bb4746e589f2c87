package proxy

import (
	"bytes"
	"fmt"
	"io"
	"testing"

	"github.com/acp-normalize/acp-normalize/pipe"
)

// benchTraffic is a turn's worth of agent output: mostly message chunks,
// some tool calls and a plan, as ACP agents write them.
func benchTraffic(frames int) []byte {
	var buf bytes.Buffer
	for i := range frames {
		switch {
		case i%50 == 0:
			fmt.Fprintf(&buf, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call","toolCallId":"tool_%d","title":"Read file","kind":"read","status":"pending","rawInput":{"path":"/src/main.go"}}}}`+"\n", i)
		case i%50 == 1:
			fmt.Fprintf(&buf, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call_update","toolCallId":"tool_%d","status":"completed"}}}`+"\n", i-1)
		default:
			fmt.Fprintf(&buf, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"chunk %d of the answer, with \"quotes\" and <tags> & more text to make it realistic"}}}}`+"\n", i)
		}
	}
	return buf.Bytes()
}

// BenchmarkRouterPassthrough measures the per-frame cost of routing agent
// output with no module claiming it (the hot path).
func BenchmarkRouterPassthrough(b *testing.B) {
	r, err := NewRouter(RouterConfig{Modules: nil})
	if err != nil {
		b.Fatal(err)
	}
	frames := bytes.Split(bytes.TrimSuffix(benchTraffic(1000), []byte("\n")), []byte("\n"))
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

// BenchmarkRelayLoop measures read, route and write of a whole stream in
// memory: what one direction's loop does per frame.
func BenchmarkRelayLoop(b *testing.B) {
	r, err := NewRouter(RouterConfig{})
	if err != nil {
		b.Fatal(err)
	}
	traffic := benchTraffic(10_000)
	b.ReportAllocs()
	b.SetBytes(int64(len(traffic)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rd := pipe.NewReader(bytes.NewReader(traffic))
		w := pipe.NewWriter(io.Discard)
		var outs []Out
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

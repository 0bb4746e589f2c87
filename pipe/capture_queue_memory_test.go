package pipe

import (
	"runtime"
	"strings"
	"testing"
)

// TestCaptureWriterQueueHeldWithinItsBound: with the disk stuck, what the
// queue holds in memory is within a quarter of its bound, for small
// records too (P6): a 100-byte stderr line counted 228 bytes but held the
// Record in the queue's slice (which append may have made twice as long)
// and a string header besides, so a stderr flood held more than twice the
// bound the docs name.
func TestCaptureWriterQueueHeldWithinItsBound(t *testing.T) {
	const limit = 8 << 20
	line := strings.Repeat("e", 100)
	for _, tc := range []struct {
		name   string
		record func() Record
	}{
		{"stderr lines", func() Record { s := line; return Record{From: Agent, Stderr: &s} }},
		{"non-JSON lines", func() Record { s := line; return Record{From: Agent, Text: &s} }},
		{"small frames", func() Record { return Record{From: Agent, Frame: []byte(`{"jsonrpc":"2.0","method":"m"}`)} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newGatedWriter()
			cw := NewCaptureWriter(g, false)
			cw.SetQueueLimit(limit)
			before := heapInUse()
			cw.Write(Record{Event: "start"})
			<-g.entered // the disk is stuck from now on
			for cw.Dropped() < 1000 {
				cw.Write(tc.record())
			}
			held := heapInUse() - before
			close(g.gate)
			if err := cw.Close(); err != nil {
				t.Fatal(err)
			}
			if held > limit*5/4 {
				t.Errorf("the queue holds %d bytes for a bound of %d (%.2f times)", held, limit, float64(held)/limit)
			}
		})
	}
}

func heapInUse() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

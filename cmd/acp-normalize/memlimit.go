package main

import (
	"runtime/debug"
)

// memoryLimitFor returns the Go runtime's soft memory limit for a session
// whose bounded state (what the modules hold, P6, and the capture's
// queue, R1) is at most bounded bytes. With the default GC pacing the
// heap may grow to twice what is live before it is collected, and on top
// of it come the binary's pages and the runtime's own memory: held state
// alone took the proxy past twice the 64 MiB budget. The
// limit makes the collector run earlier instead, so the proxy's RSS stays
// within twice that state. A frame larger than that (F3: no size limit)
// still gets the memory it needs: the limit is soft, and the runtime caps
// the collector's share of the CPU.
func memoryLimitFor(bounded int64) int64 {
	return 2*bounded - runtimeOverhead
}

// runtimeOverhead is what the proxy's RSS has besides the Go heap: the
// binary's pages, goroutine stacks, the runtime's own structures
// (measured: 15-20 MiB).
const runtimeOverhead = 24 << 20

// limitMemory sets the soft memory limit for bounded bytes of state
// unless the user set one (GOMEMLIMIT).
func limitMemory(bounded int64, getenv func(string) string) {
	if getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetMemoryLimit(memoryLimitFor(bounded))
}

package rewritetest

import (
	"bytes"
	"runtime"
	"strings"
)

// LaunchPrompt returns a prompt of about n bytes that needs JSON escapes
// (quotes and newlines), as real prompts do.
func LaunchPrompt(n int) string {
	line := "Count the files under ./proxy and say \"why\".\n"
	return strings.Repeat(line, n/len(line)+1)[:n]
}

// AllocatedBy returns the bytes the heap allocated while fn ran (an upper
// bound of how much fn grew the heap at its peak).
func AllocatedBy(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// JSONText returns s as a JSON string.
func JSONText(s string) []byte {
	var b bytes.Buffer
	b.Grow(len(s) + len(s)/8 + 2)
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\n':
			b.WriteString(`\n`)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.Bytes()
}

//go:build !race

package rewritetest

// Race reports whether the race detector is on: tests that measure
// memory or push large frames use smaller sizes under it.
const Race = false

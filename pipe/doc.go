// Package pipe is the wire: newline framing of JSON-RPC streams, a lazy peek
// at a frame's envelope that never decodes params or result, the one id
// equality of JSON-RPC (IDKey: "a" and "\u0061", 100 and 1E2 are one id;
// rule F6) that the router and check share, a frame writer
// that batches bursts and flushes when its reader goes idle, a small
// allocation-free JSON scanner for finding values inside a frame, and the
// capture (recording) format of rule R1 with the redaction of rule R2: a
// capture writer that never makes the relay wait for its disk (a bounded
// queue and a goroutine of its own), a one-pass redactor for JSON frames
// (any depth, JSON encoded in strings included, linear time), one for text
// that is not JSON, and the search for secrets of a known shape that both
// run inside strings (redact_shapes.go).
//
// Nothing here knows about ACP methods or vendors; that is package rewrite
// and its vendor modules.
package pipe

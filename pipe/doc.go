// Package pipe is the wire: newline framing of JSON-RPC streams (a frame
// longer than a window is returned in pieces, F3), a lazy peek at a
// frame's envelope that never decodes params or result (and one that
// follows a frame fed in pieces), the one id equality of JSON-RPC (IDKey:
// "a" and "\u0061", 100 and 1E2 are one id; rule F6) that the router and
// check share, a frame writer that batches bursts, flushes when its reader
// goes idle and writes a long frame piece by piece, a small
// allocation-free JSON scanner for finding values inside a frame, and the
// capture (recording) format of rule R1 with the redaction of rule R2: a
// capture writer that never makes the relay wait for its disk (a bounded
// queue and a goroutine of its own), a one-pass redactor for JSON frames
// (any depth, JSON encoded in strings included, linear time), one for text
// that is not JSON, one for a text given in pieces (a streamed frame,
// redacted across them), and the search for secrets of a known shape that
// they all run inside strings (redact_shapes.go).
//
// Nothing here knows about ACP methods or vendors; that is package rewrite
// and its vendor modules.
package pipe

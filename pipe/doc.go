// Package pipe is the wire: newline framing of JSON-RPC streams, a lazy peek
// at a frame's envelope that never decodes params or result, a frame writer
// that batches bursts and flushes when its reader goes idle, a small
// allocation-free JSON scanner for finding values inside a frame, and the
// capture (recording) format of rule R1 with the redaction of rule R2.
//
// Nothing here knows about ACP methods or vendors; that is package rewrite
// and its vendor modules.
package pipe

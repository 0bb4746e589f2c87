// Package route is the routing engine: what each frame between an ACP
// client and an agent becomes. It runs no process and reads no stream;
// package proxy runs it over a live agent's pipes, and Replay over a
// capture (replay, check, the timeline renderers and the mock agent use
// it that way).
//
// Router applies the vendor modules to frames and does the proxy's own
// bookkeeping, one concern per file:
//
//   - router.go: the Router, its configuration and Handle, which runs the
//     modules over a frame (dispatch), and the fail-open rule (P5);
//   - watch.go: the trigger index the modules' triggers and watches
//     build (package route/trigger finds them in a frame);
//   - advertise.go: the initialize advertisement, nested proxies and the
//     protocol version (rules M, K4, P7);
//   - pending.go: the client requests the agent has not answered (F6);
//   - ownrequests.go: the proxy's own requests and the interception of
//     their answers (C12), bounded (P6);
//   - record.go: non-JSON lines (F2) and recording (R1);
//   - ids.go: JSON-RPC id equality and the proxy's id scheme;
//   - replay.go: Replay, which feeds a capture's inputs to a Router (R3);
//   - stream.go: frames longer than the relay's read window, routed on
//     their first window and followed piece by piece when they stream (F3).
//
// Modules see a frame in list order, each the frame as the previous ones
// left it; a frame a module emits toward the frame's destination goes
// through the modules after it as well, so a module that works on what
// the vendor modules made of the stream (sessions, rules S0-S8) sees
// their added frames too. A module may watch a trigger it learns at run
// time (rewrite.Watcher): the router swaps in a rebuilt trigger index and
// each side's memo of the old one starts over.
//
// Frames that match no module trigger and need no bookkeeping take a path
// that neither decodes, allocates nor locks: they are forwarded as the
// exact bytes read (P1).
package route

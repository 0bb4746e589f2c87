// Package proxy is the connection between an ACP client and an agent.
//
// Router applies the vendor modules to frames and does the proxy's own
// bookkeeping: ids of unanswered client requests (rule F6), the initialize
// advertisement (rule M), proxy-owned requests and the interception of
// their responses (C12), non-JSON lines (F2) and recording (R1). It is
// used by Run, which relays a live agent process over stdio with one
// sequential loop per direction, and by Replay, which feeds it a capture.
//
// On Linux, Run starts the agent behind a subreaper: the program's own
// binary, re-executed, which ends the agent's whole process tree however
// the proxy ends (rule F5). A program that calls Run must therefore call
// SubreaperMain first thing in main (and a test binary, in TestMain).
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
// exact bytes read.
package proxy

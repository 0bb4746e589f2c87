// Package rewritetest is the test kit of vendor modules and of the tools
// around them:
//
//   - RunGolden runs txtar cases (golang.org/x/tools/txtar) and compares
//     the sections a test produces byte for byte, with a readable line
//     diff; go test -update rewrites them (Updating).
//   - LogRecorder is a slog handler that keeps records, and can fail a
//     test when a module panicked (the router fails open and would hide
//     it).
//   - Schema validates every client-bound frame a module writes against
//     the official ACP schema embedded in internal/acpschema (rule P3).
//   - Module is a tiny module that makes every kind of change a module can
//     make (replace, drop, reply, emit, request), keyed by made-up test/*
//     methods, so that the proxy, replay and renderers can be pinned
//     without a real vendor's rules; FuncModule makes a module of one
//     stateless function; AgentTraffic and Chunk feed benchmarks.
package rewritetest

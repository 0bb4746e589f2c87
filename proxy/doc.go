// Package proxy is the process shell around the routing engine (package
// route): it starts the agent, relays its stdio and the client's with one
// sequential loop per direction, runs the Router over every frame, and
// ends everything it started (rules F1-F7). Component mode (rules K1-K3)
// runs the same loops over a conductor's connection instead of an agent.
//
// On Linux, Run starts the agent behind a subreaper: the program's own
// binary, re-executed, which ends the agent's whole process tree however
// the proxy ends (rule F5). A program that calls Run must therefore call
// SubreaperMain first thing in main (and a test binary, in TestMain).
//
// Files: run.go (Run and the connection), relay.go (the two loops),
// lifecycle.go (ends, signals, last words), queue.go and readahead.go
// (bounded queues, F5), component.go and handshake.go (K1-K3),
// process*.go, spawn_*.go and subreaper_linux.go (the agent's process
// tree).
package proxy

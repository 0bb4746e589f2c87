// Command acp-normalize is a stdio proxy between an Agent Client Protocol
// (ACP) client and a coding agent that repairs vendor protocol deviations.
//
//	acp-normalize [flags] -- AGENT [ARGS...]
//	acp-normalize probe [flags] -- AGENT [ARGS...]
//	acp-normalize replay [flags] CAPTURE...
//	acp-normalize mock-agent [flags] CAPTURE
//	acp-normalize version [--json]
//	acp-normalize help [COMMAND]
//
// The first form is the proxy; probe checks an agent (initialize and
// session/new through the proxy) and says what it found; replay runs a
// recorded capture through the vendor modules without a process (as JSON
// lines, a timeline or a diff); mock-agent serves a capture as an ACP
// agent; version prints the version, commit and date from the build info
// (version.go). Started by the npm launcher, the binary also ends when
// the launcher dies (launcher_unix.go).
//
// main first hands over to proxy.SubreaperMain: on Linux the proxy
// re-executes this binary as the subreaper in front of the agent.
//
// This package is wiring only: flags, the logger, the module list (in
// modules.go, the one place modules are listed) and exit codes. The work
// is done by packages pipe, rewrite (and its vendor modules), proxy,
// timeline and mockagent.
package main

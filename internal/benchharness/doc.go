// Package benchharness measures acp-normalize as a process against the
// physical floor: the same workload through a pipeline of cat processes
// with the same number of pipe hops, in the same run, alternating.
//
// Every workload flows as it would in a session: the harness is the
// client, writing the proxy's stdin and reading its stdout, and the agent
// is either a streaming agent (it waits for the client's first line, then
// writes a prepared file) or an echo agent (cat). The floor replaces the
// proxy by one cat per direction:
//
//	proxy:  client → acp-normalize → agent → acp-normalize → client
//	floor:  client → cat           → agent → cat           → client
//
// so both have four pipe hops and the same agent. Elapsed time runs from
// the client's first line, written once the agent's ready frame has come
// through (start-up is not measured), to the last byte of the workload's
// sentinel frame.
package benchharness

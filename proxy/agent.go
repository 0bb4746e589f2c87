package proxy

import (
	"io"
	"os"

	"github.com/acp-normalize/acp-normalize/pipe"
)

// agentEnd is the connection's agent side: where the agent loop reads the
// agent's frames, where frames for the agent go, and how the lifecycle
// (rules F5, F6) sees the agent's end and brings it about. The relay and
// the router see the same frames whatever the implementation:
//
//   - agentProcess, a child process started from the agent command, its
//     stdio the agent's frames as they are;
//   - successor, the part of a conductor's stream that belongs to the
//     component's successor (component mode, rule K1): the agent's frames
//     arrive unwrapped and frames for it leave wrapped, on the same
//     stdin and stdout the client side uses.
type agentEnd interface {
	// output is the agent's frames, one per line.
	output() io.Reader
	// input writes frames for the agent.
	input() frameWriter
	// closeInput is the agent's end of input (its stdin's EOF). It also
	// frees a write to it that is blocked.
	closeInput() error
	// errOutput is the agent's stderr, or nil when it has none.
	errOutput() io.Reader
	// wait blocks until the agent is gone and returns the exit code the
	// proxy exits with (rule F6).
	wait() int
	// interruptRead makes a read of output that is blocked return, when
	// the agent exited but something still holds its stdout open.
	interruptRead() error
	// signal, terminate and kill reach the agent and everything it
	// started (rule F5); alive reports whether any of it is left, release
	// frees what tracking it holds.
	signal(sig os.Signal) error
	terminate() error
	kill() error
	alive() bool
	release()
	// describe says what the agent is, for the log.
	describe() []any
}

// frameWriter writes frames to one side; *pipe.Writer is the plain one.
// Each call writes its frames contiguously, and it is safe for concurrent
// use (the side's loop and its send queue both write).
type frameWriter interface {
	WriteFrame(frame []byte, flush bool) error
	WriteFrames(frames [][]byte, flush bool) error
	// WriteRun writes whole frames, each already followed by "\n".
	WriteRun(run []byte) error
	Flush() error
}

// Interface guards.
var (
	_ agentEnd    = (*agentProcess)(nil)
	_ frameWriter = (*pipe.Writer)(nil)
)

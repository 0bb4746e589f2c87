package proxy

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"

	"github.com/acp-normalize/acp-normalize/pipe"
)

// agentProcess is the started agent with our ends of its three pipes.
type agentProcess struct {
	// cmd is the process the proxy started and waits for: on Linux the
	// subreaper in front of the agent, elsewhere the agent itself.
	cmd    *exec.Cmd
	pid    int      // the agent's
	stdin  *os.File // we write
	stdout *os.File // we read
	stderr *os.File // we read
	group  processGroup
	in     *pipe.Writer // frames for stdin
}

// StartError means the agent could not be run at all (not found, not
// executable, a missing #! interpreter, an empty file): a usage mistake,
// which the command reports in one line with exit status 2.
type StartError struct {
	Agent string
	Err   error
}

func (e *StartError) Error() string { return fmt.Sprintf("cannot run agent %q: %v", e.Agent, e.Err) }
func (e *StartError) Unwrap() error { return e.Err }

// startAgent starts argv directly (no shell), with the proxy's environment
// and working directory (rule F4), so that its whole tree can be ended: on
// Linux behind the subreaper, elsewhere in its own process group (Unix) or
// job object (Windows). grace is the F5 grace the subreaper uses.
func startAgent(argv []string, grace time.Duration) (*agentProcess, error) {
	if len(argv) == 0 {
		return nil, fmt.Errorf("no agent command")
	}
	l, err := newSpawner(argv)
	if err != nil {
		return nil, err
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		l.abort()
		return nil, fmt.Errorf("agent stdin pipe: %w", err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		l.abort()
		closeAll(inR, inW)
		return nil, fmt.Errorf("agent stdout pipe: %w", err)
	}
	growPipe(outR)
	errR, errW, err := os.Pipe()
	if err != nil {
		l.abort()
		closeAll(inR, inW, outR, outW)
		return nil, fmt.Errorf("agent stderr pipe: %w", err)
	}
	cmd := l.command(grace)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	if err := cmd.Start(); err != nil {
		l.abort()
		closeAll(inR, inW, outR, outW, errR, errW)
		return nil, &StartError{Agent: argv[0], Err: err}
	}
	// The child has its own copies; closing ours lets EOF propagate.
	closeAll(inR, outW, errW)
	group, pid, err := l.started(cmd)
	if err != nil {
		closeAll(inW, outR, errR)
		return nil, &StartError{Agent: argv[0], Err: err}
	}
	return &agentProcess{cmd: cmd, pid: pid, stdin: inW, stdout: outR, stderr: errR, group: group, in: pipe.NewWriter(inW)}, nil
}

func closeAll(files ...*os.File) {
	for _, f := range files {
		_ = f.Close()
	}
}

// wait waits for the agent to exit and returns its exit code, 128+N when
// it was killed by signal N (rule F6).
func (p *agentProcess) wait() int {
	err := p.cmd.Wait()
	if p.cmd.ProcessState == nil {
		if err != nil {
			return 1
		}
		return 0
	}
	return exitCode(p.cmd.ProcessState)
}

func (p *agentProcess) output() io.Reader    { return p.stdout }
func (p *agentProcess) input() frameWriter   { return p.in }
func (p *agentProcess) closeInput() error    { return p.stdin.Close() }
func (p *agentProcess) errOutput() io.Reader { return p.stderr }

func (p *agentProcess) interruptRead() error { return p.stdout.SetReadDeadline(time.Now()) }

func (p *agentProcess) signal(sig os.Signal) error { return p.group.signal(sig) }
func (p *agentProcess) terminate() error           { return p.group.terminate() }
func (p *agentProcess) kill() error                { return p.group.kill() }
func (p *agentProcess) alive() bool                { return p.group.alive() }
func (p *agentProcess) release()                   { p.group.release() }
func (p *agentProcess) describe() []any            { return []any{"pid", p.pid} }

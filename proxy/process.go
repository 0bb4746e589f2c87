package proxy

import (
	"fmt"
	"os"
	"os/exec"
)

// agentProcess is the started agent with our ends of its three pipes.
type agentProcess struct {
	cmd    *exec.Cmd
	stdin  *os.File // we write
	stdout *os.File // we read
	stderr *os.File // we read
	group  processGroup
}

// startAgent starts argv directly (no shell), with the proxy's environment
// and working directory (rule F4), in its own process group (Unix) or job
// object (Windows) so that the whole tree can be ended.
func startAgent(argv []string) (*agentProcess, error) {
	if len(argv) == 0 {
		return nil, fmt.Errorf("no agent command")
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("agent stdin pipe: %w", err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW)
		return nil, fmt.Errorf("agent stdout pipe: %w", err)
	}
	growPipe(outR)
	errR, errW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW, outR, outW)
		return nil, fmt.Errorf("agent stderr pipe: %w", err)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		closeAll(inR, inW, outR, outW, errR, errW)
		return nil, fmt.Errorf("starting agent %q: %w", argv[0], err)
	}
	// The child has its own copies; closing ours lets EOF propagate.
	closeAll(inR, outW, errW)
	p := &agentProcess{cmd: cmd, stdin: inW, stdout: outR, stderr: errR}
	p.group = newProcessGroup(cmd.Process)
	return p, nil
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

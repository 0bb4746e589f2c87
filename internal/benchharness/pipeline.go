//go:build linux || darwin

package benchharness

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// Variant is one way of relaying a workload.
type Variant struct {
	Name string
	// ProxyArgs are acp-normalize's flags; nil means the floor (cats).
	ProxyArgs []string
	// Proxy is the binary, when not the one being measured (a baseline).
	Proxy string
}

// Variants are the three relays compared in every run.
var Variants = []Variant{
	{Name: "floor (cat)"},
	{Name: "--modules none", ProxyArgs: []string{"--modules", "none"}},
	{Name: "all modules", ProxyArgs: []string{}},
}

// pipeline is a chain of processes: the client writes in, reads out.
type pipeline struct {
	cmds   []*exec.Cmd
	in     *os.File     // the client's end of the first process's stdin
	out    *os.File     // the client's end of the last process's stdout
	stderr lockedBuffer // all processes' stderr, for error messages
}

// lockedBuffer collects the stderr of several processes, each copied by
// its own goroutine.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// Text returns what was written, trimmed.
func (l *lockedBuffer) Text() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return string(bytes.TrimSpace(l.b.Bytes()))
}

// startPipeline starts argvs chained by pipes, stdout to stdin.
func startPipeline(argvs [][]string) (*pipeline, error) {
	p := &pipeline{}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("pipe: %w", err)
	}
	p.in = inW
	prev := inR
	for i, argv := range argvs {
		var next, stdout *os.File
		if i == len(argvs)-1 {
			next, stdout, err = os.Pipe()
			p.out = next
		} else {
			next, stdout, err = os.Pipe()
		}
		if err != nil {
			return nil, fmt.Errorf("pipe: %w", err)
		}
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Stdin, cmd.Stdout, cmd.Stderr = prev, stdout, &p.stderr
		if err := cmd.Start(); err != nil {
			return nil, fmt.Errorf("starting %s: %w", argv[0], err)
		}
		prev.Close()
		stdout.Close()
		p.cmds = append(p.cmds, cmd)
		prev = next
	}
	return p, nil
}

// usage is what the pipeline's processes used: CPU time of all of them
// (a proxy's includes its agent's, which it reaped), and the largest
// peak RSS.
type usage struct {
	cpu    time.Duration
	maxRSS int64 // bytes
}

// peak returns the largest peak RSS (VmHWM) of the running processes,
// 0 where the system does not tell.
func (p *pipeline) peak() int64 {
	var m int64
	for _, cmd := range p.cmds {
		m = max(m, peakRSS(cmd.Process.Pid))
	}
	return m
}

// wait closes the client's ends and waits for every process.
func (p *pipeline) wait() (usage, error) {
	p.in.Close()
	p.out.Close()
	var u usage
	var firstErr error
	for _, cmd := range p.cmds {
		err := cmd.Wait()
		if err != nil && firstErr == nil {
			firstErr = fmt.Errorf("%s: %w (stderr: %s)", cmd.Path, err, p.stderr.Text())
		}
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			u.cpu += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
			u.maxRSS = max(u.maxRSS, maxRSSBytes(ru))
		}
	}
	return u, firstErr
}

// kill ends a pipeline after a failure.
func (p *pipeline) kill() {
	for _, cmd := range p.cmds {
		_ = cmd.Process.Kill()
	}
	_, _ = p.wait()
}

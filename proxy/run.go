package proxy

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/acp-normalize/acp-normalize/pipe"
)

// DefaultKillGrace is how long the agent gets to exit after its stdin is
// closed, and again after SIGTERM (rule F5).
const DefaultKillGrace = 3 * time.Second

// Config configures Run.
type Config struct {
	// Argv is the agent command and its arguments.
	Argv   []string
	Router RouterConfig
	// KillGrace is the grace of rule F5 (DefaultKillGrace when zero).
	KillGrace time.Duration
	// Stdin and Stdout are the client's streams.
	Stdin  io.Reader
	Stdout io.Writer
	// RecordRaw keeps secrets in the agent's argv in the capture's start
	// event (frames are redacted by the capture writer itself).
	RecordRaw bool
	// AgentStderr receives the agent's stderr, line by line (rule F4).
	AgentStderr io.Writer
	// Signals delivers signals to forward to the agent (rule F5).
	Signals <-chan os.Signal
	Logger  *slog.Logger
}

// connection is one live proxied session.
type connection struct {
	cfg     Config
	log     *slog.Logger
	router  *Router
	agent   *agentProcess
	writers [3]*pipe.Writer // by destination side

	clientGone     chan struct{}
	clientGoneOnce sync.Once
	agentWriteErr  sync.Once
	clientWriteErr sync.Once
	// agentStdinClosed is set just before the agent's stdin is closed.
	agentStdinClosed atomic.Bool
}

// Run starts the agent and relays between it and the client until the
// agent exits. It returns the exit code the proxy should exit with: the
// agent's (rule F6).
func Run(cfg Config) (int, error) {
	if cfg.KillGrace <= 0 {
		cfg.KillGrace = DefaultKillGrace
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Router.Logger == nil {
		cfg.Router.Logger = cfg.Logger
	}
	router, err := NewRouter(cfg.Router)
	if err != nil {
		return 1, err
	}
	undo := catchSIGPIPE()
	defer undo()

	agent, err := startAgent(cfg.Argv)
	if err != nil {
		return 1, err
	}
	defer agent.group.release()
	c := &connection{
		cfg:        cfg,
		log:        cfg.Logger,
		router:     router,
		agent:      agent,
		clientGone: make(chan struct{}),
	}
	c.writers[pipe.Client] = pipe.NewWriter(cfg.Stdout)
	c.writers[pipe.Agent] = pipe.NewWriter(agent.stdin)
	c.log.Debug("agent started", "pid", agent.cmd.Process.Pid, "argv", pipe.RedactArgs(cfg.Argv))
	c.recordEvent(pipe.Record{Event: "start"})

	stderrDone := make(chan struct{})
	go func() {
		defer close(stderrDone)
		c.copyStderr()
	}()
	agentDone := make(chan error, 1)
	go func() { agentDone <- c.relay(pipe.Agent, agent.stdout) }()
	go func() {
		err := c.relay(pipe.Client, cfg.Stdin)
		if err != nil {
			c.log.Warn("reading from client failed", "err", err)
		} else {
			c.log.Debug("client closed its stream")
		}
		c.closeClient()
	}()
	exited := make(chan int, 1)
	go func() { exited <- agent.wait() }()

	code := c.supervise(exited)

	// Deliver everything the agent wrote (rule F6). A grandchild may hold
	// the agent's stdout open: give it the grace, then end the group.
	select {
	case <-agentDone:
	case <-time.After(cfg.KillGrace):
		c.log.Warn("agent's stdout still open after it exited; ending its process group")
		_ = agent.group.kill()
		_ = agent.stdout.SetReadDeadline(time.Now())
		<-agentDone
	}
	c.deliver(pipe.Agent, router.AgentGone(nil), true)
	if err := c.writers[pipe.Client].Flush(); err != nil {
		c.log.Debug("flushing to client failed", "err", err)
	}
	select {
	case <-stderrDone:
	case <-time.After(100 * time.Millisecond):
	}
	c.recordEvent(pipe.Record{Event: "exit", Code: &code})
	return code, nil
}

// recordEvent writes a start or exit event to the capture, if any.
func (c *connection) recordEvent(rec pipe.Record) {
	capture := c.cfg.Router.Capture
	if capture == nil {
		return
	}
	if rec.Event == "start" {
		rec.Version = c.cfg.Router.Version
		rec.Argv = c.cfg.Argv
		if !c.cfg.RecordRaw {
			rec.Argv = pipe.RedactArgs(c.cfg.Argv)
		}
		rec.Modules = []string{}
		for _, m := range c.cfg.Router.Modules {
			rec.Modules = append(rec.Modules, m.Name)
		}
	}
	capture.Write(rec)
	if err := capture.Flush(); err != nil {
		c.log.Warn("writing the recording failed", "err", err)
	}
}

// supervise runs the lifecycle of rule F5 until the agent exits and
// returns its exit code.
func (c *connection) supervise(exited <-chan int) int {
	const (
		stageNone = iota
		stageTerm // next: SIGTERM
		stageKill // next: SIGKILL
	)
	stage := stageNone
	var timer *time.Timer
	var timeout <-chan time.Time
	arm := func(next int) {
		stage = next
		if timer != nil {
			timer.Stop()
		}
		timer = time.NewTimer(c.cfg.KillGrace)
		timeout = timer.C
	}
	clientGone := c.clientGone
	for {
		select {
		case code := <-exited:
			if timer != nil {
				timer.Stop()
			}
			c.log.Debug("agent exited", "code", code)
			return code
		case sig := <-c.cfg.Signals:
			c.log.Info("forwarding signal to agent", "signal", sig.String())
			if err := c.agent.group.signal(sig); err != nil {
				c.log.Warn("forwarding signal failed", "signal", sig.String(), "err", err)
			}
			if stage != stageKill {
				arm(stageKill)
			}
		case <-clientGone:
			clientGone = nil
			if stage == stageNone {
				arm(stageTerm)
			}
		case <-timeout:
			switch stage {
			case stageTerm:
				c.log.Info("agent still running after stdin closed; sending SIGTERM", "grace", c.cfg.KillGrace)
				_ = c.agent.group.terminate()
				arm(stageKill)
			case stageKill:
				c.log.Warn("agent still running; sending SIGKILL", "grace", c.cfg.KillGrace)
				_ = c.agent.group.kill()
				timeout = nil
			}
		}
	}
}

// closeClient runs once when the client is gone (EOF or a failed write to
// it): modules get their last word, then the agent's stdin is closed.
func (c *connection) closeClient() {
	c.clientGoneOnce.Do(func() {
		c.deliver(pipe.Client, c.router.ClientGone(nil), true)
		if err := c.writers[pipe.Agent].Flush(); err != nil {
			c.log.Debug("flushing to agent failed", "err", err)
		}
		c.agentStdinClosed.Store(true)
		_ = c.agent.stdin.Close()
		close(c.clientGone)
	})
}

// relay is one direction's loop: read a frame, route it, write the
// result, flush when the input has nothing more buffered.
func (c *connection) relay(from pipe.Side, r io.Reader) error {
	rd := pipe.NewReader(r)
	var outs []Out
	for {
		frame, err := rd.ReadFrame()
		if err != nil {
			c.flush(from.Other())
			if errors.Is(err, io.EOF) || errors.Is(err, os.ErrDeadlineExceeded) {
				return nil
			}
			return fmt.Errorf("reading from %s: %w", from, err)
		}
		outs = c.router.Handle(from, frame, outs[:0])
		c.deliver(from, outs, rd.Buffered() == 0)
	}
}

// deliver writes outs; frames for the same side are written contiguously.
// Frames in the frame's own direction are flushed when idle; replies to
// the sender at once.
func (c *connection) deliver(from pipe.Side, outs []Out, idle bool) {
	wroteForward := false
	for i := 0; i < len(outs); {
		to := outs[i].To
		j := i + 1
		for j < len(outs) && outs[j].To == to {
			j++
		}
		flush := idle || to == from
		var err error
		if j == i+1 {
			err = c.writers[to].WriteFrame(outs[i].Frame, flush)
		} else {
			frames := make([][]byte, 0, j-i)
			for _, o := range outs[i:j] {
				frames = append(frames, o.Frame)
			}
			err = c.writers[to].WriteFrames(frames, flush)
		}
		if err != nil {
			c.writeFailed(to, err)
		}
		if to != from {
			wroteForward = true
		}
		i = j
	}
	if idle && !wroteForward && from != 0 {
		c.flush(from.Other())
	}
	if idle && c.cfg.Router.Capture != nil {
		_ = c.cfg.Router.Capture.Flush()
	}
}

func (c *connection) flush(to pipe.Side) {
	if err := c.writers[to].Flush(); err != nil {
		c.writeFailed(to, err)
	}
}

func (c *connection) writeFailed(to pipe.Side, err error) {
	if to == pipe.Client {
		// The client is gone: handle it like client EOF (rule F5).
		c.clientWriteErr.Do(func() {
			c.log.Warn("writing to client failed; shutting the agent down", "err", err)
		})
		// On its own goroutine: closeClient may itself be writing.
		go c.closeClient()
		return
	}
	if c.agentStdinClosed.Load() {
		// Expected: the agent's stdin was closed when the client left; a
		// module's late reply (say, to a cursor/task) has nowhere to go.
		c.log.Debug("agent's stdin is closed; frame for the agent dropped", "err", err)
		return
	}
	c.agentWriteErr.Do(func() {
		c.log.Warn("writing to agent failed; its input is lost from here", "err", err)
	})
}

// copyStderr copies the agent's stderr line by line to AgentStderr and
// the capture. It runs on its own goroutine, so a slow stderr never blocks
// the protocol streams (rule F4).
func (c *connection) copyStderr() {
	br := bufio.NewReaderSize(c.agent.stderr, 16<<10)
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if len(line) > 0 {
			if line[len(line)-1] != '\n' {
				line = append(line, '\n')
			}
			if c.cfg.AgentStderr != nil {
				_, _ = c.cfg.AgentStderr.Write(line)
			}
			c.router.RecordStderr(string(pipe.TrimLineEnding(line)))
			line = line[:0]
		}
		if err != nil {
			return
		}
	}
}

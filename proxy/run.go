package proxy

import (
	"io"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/acp-normalize/acp-normalize/pipe"
)

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
	// Options names the module flags that are on, for the capture's start
	// event (replay uses the same settings).
	Options []string
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
	queues  [3]*sendQueue   // replies to a frame's sender, by destination side

	// life guards the router and the capture against use after Run
	// returns: loops still running then (Run's caller owns stdin) do
	// nothing. It is held only around work that cannot block on a peer.
	life     sync.RWMutex
	finished atomic.Bool
	stop     chan struct{} // closed when Run returns: ends the send queues

	// agentActive is when the agent loop last read bytes from the agent or
	// wrote bytes to the client; agentInRead is set while it waits for the
	// agent's stdout. Together they tell a finished-but-held stdout from a
	// slow client after the agent exits (rule F6).
	agentActive atomic.Int64
	agentInRead atomic.Bool

	clientGone     chan struct{}
	clientGoneOnce sync.Once
	// clientEOF is closed as soon as the client's stream is read to its
	// end, even if the client loop is still writing to the agent (F5).
	clientEOF      chan struct{}
	clientEOFOnce  sync.Once
	agentWriteErr  sync.Once
	clientWriteErr sync.Once
	clientFailing  atomic.Bool // a write to the client failed; closeClient is under way
	lastWordsOnce  sync.Once
	// agentStdinClosed is set just before the agent's stdin is closed.
	agentStdinClosed atomic.Bool
}

// Run starts the agent and relays between it and the client until the
// agent exits. It returns the exit code the proxy should exit with: the
// agent's (rule F6).
func Run(cfg Config) (int, error) {
	cfg = cfg.withDefaults()
	router, err := NewRouter(cfg.Router)
	if err != nil {
		return 1, err
	}
	undo := catchSIGPIPE()
	defer undo()

	agent, err := startAgent(cfg.Argv, cfg.KillGrace)
	if err != nil {
		return 1, err
	}
	defer agent.group.release()
	c := newConnection(cfg, router, agent)
	c.log.Debug("agent started", "pid", agent.pid, "argv", pipe.RedactArgs(cfg.Argv))
	c.recordEvent(pipe.Record{Event: "start"})

	stderrDone := goDone(c.copyStderr)
	agentDone := goDone(c.relayAgent)
	clientStream := newReadAhead(cfg.Stdin, c.stop, func() {
		c.clientEOFOnce.Do(func() { close(c.clientEOF) })
	})
	go c.relayClient(clientStream)
	exited := make(chan int, 1)
	go func() { exited <- agent.wait() }()

	code := c.supervise(exited)
	c.finish(agentDone, stderrDone, code)
	return code, nil
}

// withDefaults fills in what Config leaves zero.
func (cfg Config) withDefaults() Config {
	if cfg.KillGrace <= 0 {
		cfg.KillGrace = DefaultKillGrace
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Router.Logger == nil {
		cfg.Router.Logger = cfg.Logger
	}
	if cfg.Router.IDToken == "" {
		cfg.Router.IDToken = newIDToken() // C12: unique to this proxy
	}
	return cfg
}

func newConnection(cfg Config, router *Router, agent *agentProcess) *connection {
	c := &connection{
		cfg:        cfg,
		log:        cfg.Logger,
		router:     router,
		agent:      agent,
		clientGone: make(chan struct{}),
		clientEOF:  make(chan struct{}),
		stop:       make(chan struct{}),
	}
	c.writers[pipe.Client] = pipe.NewWriter(activityWriter{w: cfg.Stdout, c: c})
	c.writers[pipe.Agent] = pipe.NewWriter(agent.stdin)
	for _, side := range []pipe.Side{pipe.Client, pipe.Agent} {
		c.queues[side] = newSendQueue(c.writers[side], c.stop, func(err error) { c.writeFailed(side, err) })
	}
	return c
}

// goDone runs fn on its own goroutine and returns a channel closed when
// it returns.
func goDone(fn func()) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	return done
}

// live runs fn unless the connection is over, and reports whether it ran.
func (c *connection) live(fn func()) bool {
	c.life.RLock()
	defer c.life.RUnlock()
	if c.finished.Load() {
		return false
	}
	fn()
	return true
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
		rec.NonJSON = "drop"
		if c.cfg.Router.NonJSON == ForwardNonJSON {
			rec.NonJSON = "forward"
		}
		rec.Options = append([]string{}, c.cfg.Options...)
		rec.IDToken = c.cfg.Router.IDToken
	}
	capture.Write(rec)
	if err := capture.Flush(); err != nil {
		c.log.Warn("writing the recording failed", "err", err)
	}
}

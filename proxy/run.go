package proxy

import (
	"errors"
	"io"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/route"
)

// Config configures Run.
type Config struct {
	// Argv is the agent command and its arguments. Without one the proxy
	// is a conductor's proxy component (rule K1): Stdin and Stdout are the
	// conductor's, and the agent is the component's successor behind it.
	Argv   []string
	Router route.RouterConfig
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
	// AgentStderr receives the agent's stderr, line by line (rule F4). A
	// write to it should not block: while one does, the agent's stderr is
	// not read, and an agent whose stderr pipe is full stalls (the command
	// puts a bounded queue in front of the proxy's stderr).
	AgentStderr io.Writer
	// Signals delivers signals to forward to the agent (rule F5).
	Signals <-chan os.Signal
	Logger  *slog.Logger
}

// connection is one live proxied session.
type connection struct {
	cfg     Config
	log     *slog.Logger
	router  *route.Router
	agent   agentEnd
	writers [3]frameWriter // by destination side
	stdout  *pipe.Writer   // the client's stream (writers[pipe.Client])
	queues  [3]*sendQueue  // replies to a frame's sender, by destination side

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
	// refused is set when a proxy with an agent command got a conductor's
	// proxy handshake (K3).
	refused atomic.Pointer[HandshakeError]
}

// Run starts the agent and relays between it and the client until the
// agent exits. It returns the exit code the proxy should exit with: the
// agent's (rule F6). With no agent command (Config.Argv) it runs as a
// conductor's proxy component until the conductor's stream ends (K1);
// a handshake missing there, or one given to a proxy with an agent
// command, ends the run with exit code 2 and a *HandshakeError (K3).
func Run(cfg Config) (int, error) {
	cfg = cfg.withDefaults()
	router, err := route.NewRouter(cfg.Router)
	if err != nil {
		return 1, err
	}
	undo := catchSIGPIPE()
	defer undo()

	c := newConnection(cfg, router)
	var agent agentEnd
	var clientStream io.Reader
	var component *link
	if len(cfg.Argv) == 0 {
		component = newLink(cfg.Stdin, c.stdout, c.log)
		agent, clientStream = component, component.client()
	} else {
		p, err := startAgent(cfg.Argv, cfg.KillGrace)
		if err != nil {
			return 1, err
		}
		agent = p
		clientStream = &guardHandshake{r: cfg.Stdin, fail: c.refuseHandshake}
	}
	defer agent.release()
	c.attach(agent)
	c.log.Debug("agent started", append(agent.describe(), "argv", pipe.RedactArgs(cfg.Argv))...)
	c.recordEvent(pipe.Record{Event: "start"})

	stderrDone := closedChan
	if agent.errOutput() != nil {
		stderrDone = goDone(c.copyStderr)
	}
	agentDone := goDone(c.relayAgent)
	readAhead := newReadAhead(clientStream, c.stop, func() {
		c.clientEOFOnce.Do(func() { close(c.clientEOF) })
	})
	go c.relayClient(readAhead)
	exited := make(chan int, 1)
	go func() { exited <- agent.wait() }()

	code := c.supervise(exited)
	c.finish(agentDone, stderrDone, code)
	if herr := c.refused.Load(); herr != nil {
		return exitUsage, herr
	}
	if component != nil && component.err != nil {
		return exitUsage, component.err
	}
	return code, nil
}

// closedChan is a channel that is closed.
var closedChan = func() <-chan struct{} {
	ch := make(chan struct{})
	close(ch)
	return ch
}()

// errHandshakeRefused ends the client stream of a proxy that refused a
// conductor's handshake (K3): nothing of it reaches the agent.
var errHandshakeRefused = errors.New("the client's proxy handshake was refused")

// refuseHandshake is K3's second case: the client's first frame is a
// conductor's proxy handshake, but this proxy has an agent command. The
// client gets an error response, and the session ends.
func (c *connection) refuseHandshake(frame []byte) error {
	herr := &HandshakeError{Got: HandshakeOf(frame)}
	if !c.refused.CompareAndSwap(nil, herr) {
		return errHandshakeRefused
	}
	if reply := handshakeReply(frame, herr); reply != nil {
		c.queues[pipe.Client].send([][]byte{reply}, c.cfg.KillGrace)
	}
	return errHandshakeRefused
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
		cfg.Router.IDToken = route.NewIDToken() // C12: unique to this proxy
	}
	return cfg
}

func newConnection(cfg Config, router *route.Router) *connection {
	c := &connection{
		cfg:        cfg,
		log:        cfg.Logger,
		router:     router,
		clientGone: make(chan struct{}),
		clientEOF:  make(chan struct{}),
		stop:       make(chan struct{}),
	}
	c.stdout = pipe.NewWriter(activityWriter{w: cfg.Stdout, c: c})
	c.writers[pipe.Client] = c.stdout
	c.queues[pipe.Client] = newSendQueue(c.writers[pipe.Client], c.stop, func(err error) { c.writeFailed(pipe.Client, err) })
	return c
}

// attach makes agent the connection's agent side.
func (c *connection) attach(agent agentEnd) {
	c.agent = agent
	c.writers[pipe.Agent] = agent.input()
	c.queues[pipe.Agent] = newSendQueue(c.writers[pipe.Agent], c.stop, func(err error) { c.writeFailed(pipe.Agent, err) })
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

// recordEvent queues a start or exit event for the capture, if any; it
// never waits for the capture's target.
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
		rec.Component = len(c.cfg.Argv) == 0
		if rec.Component {
			rec.Argv = nil // no agent command: the conductor reaches the agent
		}
		rec.Modules = []string{}
		for _, m := range c.cfg.Router.Modules {
			rec.Modules = append(rec.Modules, m.Name)
		}
		rec.NonJSON = "drop"
		if c.cfg.Router.NonJSON == route.ForwardNonJSON {
			rec.NonJSON = "forward"
		}
		rec.Options = append([]string{}, c.cfg.Options...)
		rec.IDToken = c.cfg.Router.IDToken
	}
	// Queued, never flushed here: the caller may hold the connection's
	// lock, and the recording target may be a FIFO nobody reads (R1).
	// Write errors are reported when the capture is closed.
	capture.Write(rec)
}

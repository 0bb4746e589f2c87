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

// relayAgent relays the agent's stdout to the client until it ends; then
// the client requests the agent never answered get -32603 right after its
// last frame (F6).
func (c *connection) relayAgent() {
	if err := c.relay(pipe.Agent, activityReader{r: c.agent.stdout, c: c}); err != nil {
		c.log.Warn("reading from agent failed", "err", err)
	}
	var outs []Out
	if c.live(func() { outs = c.router.AgentGone(nil) }) {
		c.deliver(pipe.Agent, outs)
		c.flush(pipe.Client)
	}
}

// relayClient relays the client's stream to the agent until it ends; the
// end of the stream (or a failed read) is the client leaving (F5).
func (c *connection) relayClient(stream io.Reader) {
	if err := c.relay(pipe.Client, stream); err != nil {
		c.log.Warn("reading from client failed", "err", err)
	} else {
		c.log.Debug("client closed its stream")
	}
	c.closeClient()
}

// finish ends the connection after the agent exited with code: what it
// wrote is delivered (F6), what its tree left running is ended (F5), the
// client's late requests are answered, and the exit is recorded.
func (c *connection) finish(agentDone, stderrDone <-chan struct{}, code int) {
	c.drainAgent(agentDone)
	// Processes the agent left behind in its group are ended too: the
	// proxy leaves no orphans (on Linux the subreaper has done it, on
	// Windows the job object does it).
	c.endGroup()
	// Requests the client sent after the agent's stdout closed.
	var late []Out
	c.live(func() { late = c.router.AgentGone(nil) })
	if len(late) > 0 {
		c.queues[pipe.Client].send(frameList(late), c.cfg.KillGrace)
	}
	if !c.queues[pipe.Client].sync(c.cfg.KillGrace) {
		c.log.Debug("flushing to client did not finish")
	}
	select {
	case <-stderrDone:
	case <-time.After(100 * time.Millisecond):
	}
	// Closing the agent's stdin also frees a client loop blocked writing to
	// it (a grandchild may hold the pipe open without reading).
	c.closeAgentStdin()
	c.life.Lock()
	c.recordEvent(pipe.Record{Event: "exit", Code: &code})
	c.finished.Store(true)
	c.life.Unlock()
	close(c.stop)
}

// drainAgent waits, after the agent exited, until everything it wrote
// has been delivered (F6). If the loop has waited for the agent's stdout
// for the grace with nothing arriving, a grandchild holds it open: the
// group is ended and the read interrupted. If the loop is stuck writing to
// the client for ten graces, the client is not reading and the rest is
// given up. A signal to the proxy also stops the wait.
func (c *connection) drainAgent(agentDone <-chan struct{}) {
	grace := c.cfg.KillGrace
	c.touchAgent()
	tick := time.NewTicker(max(grace/10, 10*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-agentDone:
			return
		case sig := <-c.cfg.Signals:
			c.log.Info("signal while delivering the agent's last output; stopping", "signal", sig.String())
			_ = c.agent.group.kill()
			return
		case <-tick.C:
		}
		idle := time.Since(time.Unix(0, c.agentActive.Load()))
		if !c.agentInRead.Load() {
			// Writing to the client: a slow client (an editor stalled by
			// a dialog) gets ten graces of patience, one that reads
			// nothing at all is given up on then.
			if idle >= 10*grace {
				c.log.Warn("client is not reading; the agent's last output is not delivered", "waited", idle)
				return
			}
			continue
		}
		if idle < grace {
			continue
		}
		// Info: handled (what it wrote was delivered), and a leftover
		// holding the pipe is the agent's habit, not the user's to fix.
		c.log.Info("agent's stdout still open after it exited; ending its process group")
		_ = c.agent.group.kill()
		if err := c.agent.stdout.SetReadDeadline(time.Now()); err != nil {
			c.log.Debug("cannot interrupt the read of the agent's stdout", "err", err)
		}
		select {
		case <-agentDone:
		case <-time.After(time.Second): // a pipe that cannot be interrupted (Windows)
		}
		return
	}
}

func (c *connection) touchAgent() { c.agentActive.Store(time.Now().UnixNano()) }

// activityReader marks the agent loop's reads for drainAgent.
type activityReader struct {
	r io.Reader
	c *connection
}

func (a activityReader) Read(p []byte) (int, error) {
	a.c.agentInRead.Store(true)
	n, err := a.r.Read(p)
	a.c.agentInRead.Store(false)
	if n > 0 {
		a.c.touchAgent()
	}
	return n, err
}

// activityWriter marks writes to the client for drainAgent.
type activityWriter struct {
	w io.Writer
	c *connection
}

func (a activityWriter) Write(p []byte) (int, error) {
	n, err := a.w.Write(p)
	if n > 0 {
		a.c.touchAgent()
	}
	return n, err
}

func frameList(outs []Out) [][]byte {
	frames := make([][]byte, 0, len(outs))
	for _, o := range outs {
		frames = append(frames, o.Frame)
	}
	return frames
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
	clientGone, clientEOF := c.clientGone, c.clientEOF
	for {
		select {
		case code := <-exited:
			if timer != nil {
				timer.Stop()
			}
			c.log.Debug("agent exited", "code", code)
			return code
		case sig := <-c.cfg.Signals:
			// The proxy is shutting down: modules answer what they still
			// hold before the agent hears of it (C12).
			c.live(func() { c.recordEvent(pipe.Record{Event: "signal", Signal: sig.String()}) })
			limit := min(c.cfg.KillGrace, time.Second)
			said := make(chan struct{})
			go func() {
				c.lastWords(limit)
				close(said)
			}()
			select {
			case <-said:
			case <-time.After(limit):
			}
			c.log.Info("forwarding signal to agent", "signal", sig.String())
			if err := c.agent.group.signal(sig); err != nil {
				c.log.Warn("forwarding signal failed", "signal", sig.String(), "err", err)
			}
			if stage != stageKill {
				arm(stageKill)
			}
		case <-clientGone:
			clientGone, clientEOF = nil, nil
			if stage == stageNone {
				arm(stageTerm)
			}
		case <-clientEOF:
			// The client loop may still be writing to an agent that does
			// not read: the grace runs from the EOF all the same.
			clientGone, clientEOF = nil, nil
			if stage == stageNone {
				arm(stageTerm)
			}
		case <-timeout:
			switch stage {
			case stageTerm:
				c.log.Info("agent still running after stdin closed; sending SIGTERM", "grace", c.cfg.KillGrace)
				// If the client loop is still blocked writing to the
				// agent, closing its stdin frees it.
				c.closeAgentStdin()
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
// it): the F5 grace starts, modules get their last word, and the agent's
// stdin is closed once what was meant for it is written, or after the
// grace if the agent does not read it (closing unblocks the writer).
func (c *connection) closeClient() {
	c.clientGoneOnce.Do(func() {
		close(c.clientGone)
		c.live(func() { c.recordEvent(pipe.Record{Event: "client-gone"}) })
		c.lastWords(c.cfg.KillGrace)
		c.closeAgentStdin()
	})
}

// closeAgentStdin closes the agent's stdin (its EOF), which also fails a
// write to it that is blocked.
func (c *connection) closeAgentStdin() {
	c.agentStdinClosed.Store(true)
	_ = c.agent.stdin.Close()
}

// lastWords runs once: the modules' Close outputs (rule C12: Cursor gets
// cancelled for requests the proxy still holds) are sent, and what the
// agent's writer holds is flushed, waiting at most limit.
func (c *connection) lastWords(limit time.Duration) {
	c.lastWordsOnce.Do(func() {
		var outs []Out
		if !c.live(func() { outs = c.router.ClientGone(nil) }) {
			return
		}
		deadline := time.Now().Add(limit)
		for _, side := range []pipe.Side{pipe.Agent, pipe.Client} {
			var frames [][]byte
			for _, o := range outs {
				if o.To == side {
					frames = append(frames, o.Frame)
				}
			}
			if len(frames) > 0 && !c.queues[side].send(frames, max(time.Until(deadline), time.Millisecond)) {
				c.log.Warn("the modules' last frames could not be queued", "to", side.String())
			}
		}
		if !c.queues[pipe.Agent].sync(max(time.Until(deadline), time.Millisecond)) {
			c.log.Warn("agent is not reading its stdin; closing it anyway", "waited", limit)
		}
	})
}

// endGroup ends what is left of the agent's process group after the agent
// exited: SIGTERM, then SIGKILL after the grace.
func (c *connection) endGroup() {
	if !c.agent.group.alive() {
		return
	}
	c.log.Info("ending processes the agent left running", "grace", c.cfg.KillGrace)
	_ = c.agent.group.terminate()
	deadline := time.Now().Add(c.cfg.KillGrace)
	for c.agent.group.alive() && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if c.agent.group.alive() {
		_ = c.agent.group.kill()
	}
}

// relay is one direction's loop: read a frame, route it, write the
// result. Output is flushed whenever the reader is about to read from its
// source: after a burst, and before a partial line makes it wait, so no
// complete frame is ever held back (P2).
//
// Frames the router passes through unchanged are not copied: consecutive
// ones lie next to each other in the reader's buffer and are written as
// one run, straight from there, before anything else goes out and before
// the reader touches its buffer again (the hot path: one write per read).
func (c *connection) relay(from pipe.Side, r io.Reader) error {
	to := from.Other()
	rd := pipe.NewReader(r)
	var run []byte // passthrough frames not yet written, in rd's buffer
	writeRun := func() {
		if len(run) > 0 {
			if err := c.writers[to].WriteRun(run); err != nil {
				c.writeFailed(to, err)
			}
			run = nil
		}
	}
	// The capture is not flushed here: its writer flushes by itself, and
	// waiting for its disk would make the session wait (R1).
	rd.OnFill(func() {
		writeRun()
		c.flush(to)
	})
	var outs []Out
	for {
		frame, err := rd.ReadFrame()
		if err != nil {
			writeRun()
			c.flush(to)
			if errors.Is(err, io.EOF) || errors.Is(err, os.ErrDeadlineExceeded) {
				return nil
			}
			return fmt.Errorf("reading from %s: %w", from, err)
		}
		if !c.live(func() { outs = c.router.Handle(from, frame, outs[:0]) }) {
			return nil
		}
		if raw := rd.Raw(); raw != nil && isPassthrough(outs, to, frame) {
			if longer := extendRun(run, raw); longer != nil {
				run = longer
			} else {
				writeRun()
				run = raw
			}
			continue
		}
		writeRun()
		c.deliver(from, outs)
	}
}

// isPassthrough reports whether outs is frame itself, forwarded to to.
func isPassthrough(outs []Out, to pipe.Side, frame []byte) bool {
	return len(outs) == 1 && outs[0].To == to && outs[0].Op == "" &&
		len(outs[0].Frame) == len(frame) && len(frame) > 0 && &outs[0].Frame[0] == &frame[0]
}

// extendRun returns run extended by raw when raw follows it directly in
// memory, and nil when it does not (or run is empty).
func extendRun(run, raw []byte) []byte {
	n := len(run)
	if n == 0 || cap(run)-n < len(raw) || &run[:n+1][n] != &raw[0] {
		return nil
	}
	return run[:n+len(raw)]
}

// deliver writes outs. Frames in the input's direction are written in
// place by the calling loop (buffered; the loop flushes before it reads);
// frames for the input's sender, and frames with no input (from == 0), go
// through that side's queue. Frames for one side stay contiguous.
func (c *connection) deliver(from pipe.Side, outs []Out) {
	for i := 0; i < len(outs); {
		to := outs[i].To
		j := i + 1
		for j < len(outs) && outs[j].To == to {
			j++
		}
		if to == from || from == 0 {
			frames := make([][]byte, 0, j-i)
			for _, o := range outs[i:j] {
				frames = append(frames, o.Frame)
			}
			c.queues[to].send(frames, 0)
		} else if j == i+1 {
			if err := c.writers[to].WriteFrame(outs[i].Frame, false); err != nil {
				c.writeFailed(to, err)
			}
		} else {
			frames := make([][]byte, 0, j-i)
			for _, o := range outs[i:j] {
				frames = append(frames, o.Frame)
			}
			if err := c.writers[to].WriteFrames(frames, false); err != nil {
				c.writeFailed(to, err)
			}
		}
		i = j
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
		if c.clientFailing.CompareAndSwap(false, true) {
			go c.closeClient()
		}
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

// maxStderrLine bounds the agent stderr line copyStderr holds (P6): a
// longer line is passed on in pieces of this size.
const maxStderrLine = 1 << 20

// copyStderr copies the agent's stderr line by line to AgentStderr and
// the capture. It runs on its own goroutine, so a slow stderr never blocks
// the protocol streams (rule F4). A line longer than maxStderrLine is
// passed on in pieces.
func (c *connection) copyStderr() {
	br := bufio.NewReaderSize(c.agent.stderr, 16<<10)
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) && len(line) < maxStderrLine {
			continue
		}
		if len(line) > 0 {
			if line[len(line)-1] != '\n' {
				line = append(line, '\n')
			}
			text := string(pipe.TrimLineEnding(line))
			if !c.live(func() { c.router.RecordStderr(text) }) {
				return // Run has returned: its caller owns AgentStderr again
			}
			if c.cfg.AgentStderr != nil {
				_, _ = c.cfg.AgentStderr.Write(line)
			}
			line = line[:0]
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return
		}
	}
}

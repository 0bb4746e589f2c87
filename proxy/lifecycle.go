package proxy

import (
	"time"

	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/route"
)

// DefaultKillGrace is how long the agent gets to exit after its stdin is
// closed, and again after SIGTERM (rule F5).
const DefaultKillGrace = 3 * time.Second

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
	var late []route.Out
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
			_ = c.agent.kill()
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
		_ = c.agent.kill()
		if err := c.agent.interruptRead(); err != nil {
			c.log.Debug("cannot interrupt the read of the agent's stdout", "err", err)
		}
		select {
		case <-agentDone:
		case <-time.After(time.Second): // a pipe that cannot be interrupted (Windows)
		}
		return
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
			if err := c.agent.signal(sig); err != nil {
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
				_ = c.agent.terminate()
				arm(stageKill)
			case stageKill:
				c.log.Warn("agent still running; sending SIGKILL", "grace", c.cfg.KillGrace)
				_ = c.agent.kill()
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
	_ = c.agent.closeInput()
}

// lastWords runs once: the modules' Close outputs (rule C12: Cursor gets
// cancelled for requests the proxy still holds) are sent, and what the
// agent's writer holds is flushed, waiting at most limit.
func (c *connection) lastWords(limit time.Duration) {
	c.lastWordsOnce.Do(func() {
		var outs []route.Out
		if !c.live(func() { outs = c.router.ClientGone(nil) }) {
			return
		}
		// A client frame half passed on to the agent (F3) holds the
		// agent's stdin until its rest comes, which it may never do: it
		// is cut off, so the last words get through (C12). On their own
		// goroutine: the cut waits for a piece being written to an agent
		// that may not read, which the sync below bounds.
		if sw, ok := c.writers[pipe.Agent].(streamWriter); ok {
			go func() {
				if sw.CutFrame() {
					c.log.Info("a frame from the client was being passed on to the agent: cut off there for the modules' last frames", "rule", "F5")
				}
			}()
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
	if !c.agent.alive() {
		return
	}
	c.log.Info("ending processes the agent left running", "grace", c.cfg.KillGrace)
	_ = c.agent.terminate()
	deadline := time.Now().Add(c.cfg.KillGrace)
	for c.agent.alive() && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if c.agent.alive() {
		_ = c.agent.kill()
	}
}

package proxy

// The relay of one direction, and the buffer-aliasing invariant it lives
// by.
//
// A frame from pipe.Reader.ReadFrame (and its Raw line) is a slice of the
// reader's buffer, valid until the reader reads again. The Router returns
// a passthrough frame as that same slice (no copy: the hot path), and a
// module's Rewriter sees it as Frame.Raw, valid only during its call. So:
//
//   - everything Handle returned for a frame is written, or copied, before
//     the loop reads the next frame: frames for the other side are written
//     in place (deliver), frames for the sender are copied into that
//     side's queue (sendQueue.send), and a run of adjacent passthrough
//     frames is written from the buffer by the reader's OnFill hook, which
//     runs before the reader moves or refills its buffer;
//   - a module that keeps bytes of a frame past its call copies them
//     (rewrite.Rewriter's contract).
//
// Each direction is one goroutine running relay, so frames of a
// direction leave in the order they came (P2). A frame longer than the
// read window (relayLong) is the exception to "whole frames": unless the
// router says something may need it whole, its pieces are written as they
// are read, each before the next read, under the writer's lock for the
// whole frame (pipe.FrameWriter), so no other frame comes between them.

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"time"

	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/route"
)

// relayAgent relays the agent's stdout to the client until it ends; then
// the client requests the agent never answered get -32603 right after its
// last frame (F6).
func (c *connection) relayAgent() {
	if err := c.relay(pipe.Agent, activityReader{r: c.agent.output(), c: c}); err != nil {
		c.log.Warn("reading from agent failed", "err", err)
	}
	var outs []route.Out
	if c.live(func() { outs = c.router.AgentGone(nil) }) {
		c.deliver(pipe.Agent, outs)
		c.flush(pipe.Client)
	}
}

// relayClient relays the client's stream to the agent until it ends; the
// end of the stream (or a failed read) is the client leaving (F5).
func (c *connection) relayClient(stream io.Reader) {
	if err := c.relay(pipe.Client, stream); errors.Is(err, errHandshakeRefused) {
		c.log.Debug("client stream ended: its proxy handshake was refused", "rule", "K3")
	} else if err != nil {
		c.log.Warn("reading from client failed", "err", err)
	} else {
		c.log.Debug("client closed its stream")
	}
	c.closeClient()
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

func frameList(outs []route.Out) [][]byte {
	frames := make([][]byte, 0, len(outs))
	for _, o := range outs {
		frames = append(frames, o.Frame)
	}
	return frames
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
	// The client's stream is read ahead (up to maxReadAhead): its EOF is
	// seen while the relay is blocked passing a long frame on to an agent
	// that does not read (F5). In component mode (K1) frames come whole
	// out of the conductor's envelopes: nothing to stream.
	if _, component := c.agent.(*link); !component {
		rd.SetWindow(longWindow)
	}
	var long route.Long
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
	onFill := func() {
		writeRun()
		c.flush(to)
	}
	rd.OnFill(onFill)
	var outs []route.Out
	for {
		frame, err := rd.ReadFrame()
		if err == nil && rd.Partial() {
			writeRun()
			var live bool
			live, err = c.relayLong(from, rd, frame, &long, &outs, onFill)
			if !live {
				return nil
			}
			if err == nil {
				continue
			}
		}
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

// longWindow is the most of a frame the relay reads before it routes it
// (F3): a longer frame is routed on its first window and, unless
// something may need it whole (route.BeginLong), passed on piece by piece
// as it arrives, so that memory stays bounded whatever its size.
const longWindow = 1 << 20

// relayLong relays a frame longer than longWindow, whose first window is
// head (rd is partial): held whole and routed as any frame when the
// router says so, else written piece by piece (or dropped, F2) as it
// arrives. live is false when Run has returned.
func (c *connection) relayLong(from pipe.Side, rd *pipe.Reader, head []byte, l *route.Long, outs *[]route.Out, onFill func()) (live bool, err error) {
	to := from.Other()
	sw, streams := c.writers[to].(streamWriter)
	act, limit := route.LongHold, math.MaxInt // a writer that cannot stream: whole, as before
	if streams && !c.live(func() { act, limit = c.router.BeginLong(from, head, l), c.router.HoldLimit() }) {
		return false, nil
	}
	if act == route.LongHold {
		frame, err := rd.Assemble(head, limit)
		if err != nil {
			return true, err
		}
		if !rd.Partial() {
			if !c.live(func() { *outs = c.router.Handle(from, frame, (*outs)[:0]) }) {
				return false, nil
			}
			c.deliver(from, *outs)
			return true, nil
		}
		if !c.live(func() { c.router.Spill(l, frame) }) {
			return false, nil
		}
		head, act = frame, route.LongForward
	}
	var fw *pipe.FrameWriter
	failed := false
	write := func(b []byte) {
		if err := fw.Write(b); err != nil && !failed {
			failed = true
			c.writeFailed(to, err)
		}
	}
	if act == route.LongForward {
		// The writer is this frame's until its end: nothing to flush
		// meanwhile (its pieces go out unbuffered), and the flush would
		// wait for the writer.
		rd.OnFill(nil)
		defer rd.OnFill(onFill)
		fw = sw.BeginFrame()
		defer func() {
			// A frame cut off by a failed read still gets its newline:
			// what follows on the stream (the -32603 answers, F6) must
			// stand on lines of their own.
			if err := fw.End(); err != nil && !failed {
				c.writeFailed(to, err)
			}
		}()
		write(head)
	}
	for rd.Partial() {
		piece, err := rd.ReadPiece()
		if err != nil {
			c.live(func() { c.router.AbortLong(l) })
			return true, err
		}
		if !c.live(func() {
			c.router.LongPiece(l, piece)
			if !rd.Partial() {
				c.router.EndLong(l)
			}
		}) {
			return false, nil
		}
		if fw != nil {
			write(piece)
		}
	}
	return true, nil
}

// streamWriter is a frameWriter that can write a frame in pieces (the
// process's pipes; not the conductor's wrapped messages of component
// mode, which get long frames whole).
type streamWriter interface {
	BeginFrame() *pipe.FrameWriter
}

// isPassthrough reports whether outs is frame itself, forwarded to to.
func isPassthrough(outs []route.Out, to pipe.Side, frame []byte) bool {
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
func (c *connection) deliver(from pipe.Side, outs []route.Out) {
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
	// Info, not warn: the agent closed its stdin or is exiting (a client's
	// late answer after the agent's exit is the usual case); the exit, and
	// its code, say what the user needs, so there is nothing to act on here.
	c.agentWriteErr.Do(func() {
		c.log.Info("writing to agent failed; its input is lost from here", "err", err)
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
	br := bufio.NewReaderSize(c.agent.errOutput(), 16<<10)
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

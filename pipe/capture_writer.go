package pipe

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
)

// ErrCaptureStalled is the error of CloseWithin when it gave up on a
// target that took nothing for its whole bound (a FIFO nobody reads).
var ErrCaptureStalled = errors.New("the recording target took nothing")

// DefaultCaptureQueue is the default bound, in bytes, of the records a
// CaptureWriter holds that are not written yet.
const DefaultCaptureQueue = 64 << 20

// recordOverhead is what a record counts against the queue bound besides
// its frame or text: the Record itself in the queue's slice, counted
// twice since append may have made the slice twice as long as what it
// holds, and the header of a text's string. A flat 128 let a flood of
// small records (a stderr flood) hold 2.5 times the bound.
const recordOverhead = 2*int(unsafe.Sizeof(Record{})) + 16

// CaptureWriter writes capture records (rule R1) without ever making its
// caller wait for the disk: Write numbers and timestamps a record, copies
// its bytes and queues it; a goroutine of the writer redacts it (rule R2,
// unless raw), encodes it and writes it, and flushes whenever it has
// written what was queued. A slow disk or a huge frame delays the capture,
// never the relay.
//
// The queue is bounded in bytes: records up to DefaultCaptureQueue in
// all, and besides them one record larger than that (a huge frame); the
// writer holds one more such batch while it writes it. So the memory a
// capture holds is at most about twice the bound plus twice the largest
// frame. A record that does not fit is dropped, never waited for: it keeps its sequence number, and the
// next record that fits is preceded by a "dropped" event whose count says
// how many records are missing just before it ({"event":"dropped",
// "dropped":N}), so a capture never loses records silently. Events (start,
// exit, ...) are never dropped. Records are written in the order they were
// numbered.
//
// Frames that are not valid JSON (or have spaces around them) are written
// as text so the capture stays one JSON object per line; their secrets
// are found with RedactText, as those of non-JSON lines and stderr lines.
type CaptureWriter struct {
	mu        sync.Mutex
	changed   sync.Cond // queue, written or closed changed
	queue     []Record
	queued    int  // bytes held by the queue's records up to the bound
	oversized bool // the queue holds a record larger than the bound
	limit     int
	seq       int64
	gap       int64 // records dropped since the last record queued
	dropped   int64 // records dropped in all
	nQueued   int64 // records queued in all
	written   int64 // of those, written and flushed (or given up on after an error)
	raw       bool
	now       func() time.Time
	started   bool
	closed    bool
	done      chan struct{}
	err       error // first write error
	unwritten int64 // records CloseWithin gave up on

	// A record written in pieces (BeginText): streaming is set from its
	// BeginText to its EndText, cut when a piece was left out (the queue
	// was full): the rest of its pieces are too.
	streaming, cut bool

	accepted atomic.Int64  // bytes the target has taken: CloseWithin's sign of progress
	w        *bufio.Writer // used by the writing goroutine only
	// sink, when set, takes each record in w's stead (NewCaptureSink).
	sink func(Record)
	// The writing goroutine's state for a record in pieces: open from its
	// first piece to its last; the records queued meanwhile wait in held
	// (their bytes still count in queued) so the line is not broken.
	open     bool
	held     []Record
	heldSize int
	text     *TextRedactor
	esc      []byte
	carry    []byte // the start of a character cut by a piece's end
}

// Parts of a record written in pieces.
const (
	partBegin = iota + 1
	partPiece
	partEnd
	partEndCut // the end of a record whose pieces the queue could not all take
)

// BeginText starts an input record from side from whose text comes in
// pieces (TextPiece, then EndText): a frame that streams (F3), which is
// never held whole. It is written as a "text" record (the frame's bytes,
// whatever they are: its validity is known only at its end), redacted as
// a text is (R2) as the pieces come, a secret split across two pieces
// included (TextRedactor). It reports false, and records nothing, when it
// cannot: another record in pieces is open (one at a time), the writer is
// a sink (NewCaptureSink: its records are whole) or closed, or the queue
// is full; the caller then records the frame whole. It returns the
// record's sequence number.
func (c *CaptureWriter) BeginText(from Side) (int64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.streaming || c.sink != nil || c.closed || c.err != nil || !c.fits(recordOverhead) {
		return 0, false
	}
	c.streaming, c.cut = true, false
	now := c.now()
	if c.gap > 0 {
		c.seq++
		c.enqueue(Record{Seq: c.seq, TS: now, Event: "dropped", Dropped: c.gap}, recordOverhead)
		c.gap = 0
	}
	c.seq++
	c.enqueue(Record{Seq: c.seq, TS: now, From: from, part: partBegin}, recordOverhead)
	return c.seq, true
}

// LeaveOut counts a record the caller could not record (a long frame that
// could be neither recorded in pieces nor held whole): it is numbered and
// a "dropped" event stands for it, as for a record the queue could not
// take.
func (c *CaptureWriter) LeaveOut() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	if !c.closed && c.err == nil {
		c.gap++
		c.dropped++
	}
	return c.seq
}

// TextPiece queues the next piece of the record BeginText started; it
// copies piece. A piece that does not fit in the queue is left out, and
// so is the rest of the record's text: the record ends there, marked
// "cut":true.
func (c *CaptureWriter) TextPiece(piece []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.streaming || c.cut || c.closed {
		return
	}
	size := recordOverhead + len(piece)
	if !c.fits(size) {
		c.cut = true
		c.dropped++
		return
	}
	c.enqueue(Record{Frame: bytes.Clone(piece), part: partPiece}, size)
}

// EndText ends the record BeginText started; cut says its text is not
// whole (the frame was cut off: its stream failed), as a piece left out
// does.
func (c *CaptureWriter) EndText(cut bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.streaming {
		return
	}
	c.cut = c.cut || cut
	c.streaming = false
	if c.closed {
		return
	}
	// Never left out: the line must end.
	end := uint8(partEnd)
	if c.cut {
		end = partEndCut
	}
	c.enqueue(Record{part: end}, recordOverhead)
}

// countingWriter counts the bytes its writer has taken.
type countingWriter struct {
	w io.Writer
	n *atomic.Int64
}

func (cw countingWriter) Write(p []byte) (int, error) {
	n, err := cw.w.Write(p)
	cw.n.Add(int64(n))
	return n, err
}

// NewCaptureWriter returns a CaptureWriter writing to w. With raw set,
// secrets are not redacted. Close it to write out what is queued.
func NewCaptureWriter(w io.Writer, raw bool) *CaptureWriter {
	c := &CaptureWriter{raw: raw, now: time.Now, limit: DefaultCaptureQueue, done: make(chan struct{})}
	c.w = bufio.NewWriterSize(countingWriter{w, &c.accepted}, writeBufferSize)
	c.changed.L = &c.mu
	return c
}

// NewCaptureSink returns a CaptureWriter that hands each record to sink,
// on the writer's goroutine and in order, numbered, timestamped and
// redacted (unless raw) exactly as NewCaptureWriter's would be written,
// instead of encoding it: for a program that reads its own session's
// capture (the probe's report), without a round trip through JSONL. The
// record's byte slices are the sink's to keep.
func NewCaptureSink(sink func(Record), raw bool) *CaptureWriter {
	c := &CaptureWriter{sink: sink, raw: raw, now: time.Now, limit: DefaultCaptureQueue, done: make(chan struct{})}
	c.changed.L = &c.mu
	return c
}

// SetClock replaces the clock used for timestamps (for tests). Call it
// before the first Write.
func (c *CaptureWriter) SetClock(now func() time.Time) { c.now = now }

// SetQueueLimit replaces the queue bound in bytes (DefaultCaptureQueue).
// Call it before the first Write.
func (c *CaptureWriter) SetQueueLimit(bytes int) { c.limit = bytes }

// Write numbers, timestamps and queues r, and returns its sequence number.
// It never waits for the disk. r's byte slices are copied: the caller may
// reuse them once Write returns.
func (c *CaptureWriter) Write(r Record) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	size := recordOverhead + len(r.Frame)
	if r.Text != nil {
		size += len(*r.Text)
	}
	if r.Stderr != nil {
		size += len(*r.Stderr)
	}
	if c.closed || c.err != nil || (r.Event == "" && !c.fits(size)) {
		c.seq++
		if !c.closed && c.err == nil {
			c.gap++
			c.dropped++
		}
		return c.seq
	}
	now := c.now()
	if c.gap > 0 {
		c.seq++
		c.enqueue(Record{Seq: c.seq, TS: now, Event: "dropped", Dropped: c.gap}, recordOverhead)
		c.gap = 0
	}
	c.seq++
	r.Seq, r.TS = c.seq, now
	if r.Frame != nil {
		r.Frame = bytes.Clone(r.Frame)
	}
	c.enqueue(r, size)
	return r.Seq
}

// fits reports whether a record of size bytes may be queued: records up
// to the bound in all, and besides them one record larger than the bound.
func (c *CaptureWriter) fits(size int) bool {
	if size > c.limit {
		return !c.oversized
	}
	return c.queued+size <= c.limit
}

func (c *CaptureWriter) enqueue(r Record, size int) {
	if !c.started {
		c.started = true
		go c.run()
	}
	c.queue = append(c.queue, r)
	if size > c.limit {
		c.oversized = true
	} else {
		c.queued += size
	}
	c.nQueued++
	c.changed.Broadcast()
}

// Flush waits until every record queued so far is written and flushed,
// and returns the first write error. It waits for the disk: the relay
// never calls it (the writer flushes by itself).
func (c *CaptureWriter) Flush() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	target := c.nQueued
	for c.written < target {
		c.changed.Wait()
	}
	return c.err
}

// Close writes a "dropped" event for records dropped at the end, waits
// until everything queued is written and flushed, stops the writer and
// returns the first write error. Later writes are ignored. It waits for
// the target as long as it takes: see CloseWithin for a bound.
func (c *CaptureWriter) Close() error { return c.CloseWithin(0) }

// CloseWithin is Close that gives up on a target that has taken no byte
// for stall (none: no bound): a FIFO nobody opens or reads, a stuck
// disk. Waiting is bounded by the target's silence, not by the time the
// writing takes, so a slow but moving disk still gets everything. When it
// gives up it returns an error wrapping ErrCaptureStalled, Unwritten
// counts the records that were queued but not written (the batch being
// written among them), and the writing goroutine is left blocked on the
// target: the caller is about to exit, or must not use the target again.
func (c *CaptureWriter) CloseWithin(stall time.Duration) error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return c.err
	}
	if c.streaming {
		// A record in pieces still open (the session ended in the middle
		// of a long frame): it ends here, cut, so its line ends.
		c.streaming = false
		c.enqueue(Record{part: partEndCut}, recordOverhead)
	}
	if c.gap > 0 {
		c.seq++
		c.enqueue(Record{Seq: c.seq, TS: c.now(), Event: "dropped", Dropped: c.gap}, recordOverhead)
		c.gap = 0
	}
	c.closed = true
	c.changed.Broadcast()
	started := c.started
	c.mu.Unlock()
	if !started {
		// Nothing was ever queued: the buffer is empty (a sink has
		// none), the flush writes nothing.
		if c.w != nil {
			if err := c.w.Flush(); err != nil {
				c.mu.Lock()
				c.err = err
				c.mu.Unlock()
			}
		}
	} else if !c.waitDone(stall) {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.unwritten = c.nQueued - c.written
		err := fmt.Errorf("%w for %v: %d records were not written", ErrCaptureStalled, stall, c.unwritten)
		c.err = errors.Join(c.err, err)
		return c.err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// waitDone waits for the writing goroutine to end, and reports whether it
// did before the target stayed silent for stall (0: no bound).
func (c *CaptureWriter) waitDone(stall time.Duration) bool {
	if stall <= 0 {
		<-c.done
		return true
	}
	t := time.NewTimer(stall)
	defer t.Stop()
	last := c.accepted.Load()
	for {
		select {
		case <-c.done:
			return true
		case <-t.C:
			n := c.accepted.Load()
			if n == last {
				return false
			}
			last = n
			t.Reset(stall)
		}
	}
}

// Unwritten returns the number of records CloseWithin gave up on.
func (c *CaptureWriter) Unwritten() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.unwritten
}

// Dropped returns the number of records dropped because the queue was
// full.
func (c *CaptureWriter) Dropped() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.dropped
}

// run is the writing goroutine: it takes all queued records at once,
// writes them, flushes, and reports them written.
func (c *CaptureWriter) run() {
	defer close(c.done)
	var buf []byte
	for {
		c.mu.Lock()
		for len(c.queue) == 0 && !c.closed {
			c.changed.Wait()
		}
		batch := c.queue
		if len(batch) == 0 { // closed and drained
			c.mu.Unlock()
			return
		}
		heldBefore := c.heldSize // still counted in queued: not written yet
		c.queue, c.queued, c.oversized = nil, heldBefore, false
		failed := c.err != nil
		c.mu.Unlock()

		var err error
		written := int64(len(batch))
		if !failed {
			for i := range batch {
				r := &batch[i]
				if c.open && r.part == 0 {
					// A record in pieces is being written: this one
					// waits for its end.
					c.held = append(c.held, *r)
					c.heldSize += recordSize(r)
					written--
					continue
				}
				if r.part != 0 {
					err = c.writePart(r)
				} else {
					buf, err = c.writeRecord(buf, r)
				}
				if err != nil {
					break
				}
				batch[i] = Record{} // its bytes can go
				if cap(buf) > shrinkAbove {
					buf = nil // one huge record does not pin its size
				}
				if !c.open && len(c.held) > 0 {
					for j := range c.held {
						if buf, err = c.writeRecord(buf, &c.held[j]); err != nil {
							break
						}
					}
					written += int64(len(c.held))
					c.held, c.heldSize = nil, 0
				}
			}
			if err == nil && c.w != nil {
				err = c.w.Flush()
			}
		}
		c.mu.Lock()
		if err != nil && c.err == nil {
			c.err = err
		}
		if err != nil || failed {
			written += int64(len(c.held)) // given up on
			c.held, c.heldSize = nil, 0
		}
		c.queued = max(c.queued+c.heldSize-heldBefore, 0)
		c.written += written
		c.changed.Broadcast()
		c.mu.Unlock()
	}
}

// recordSize is what r counts against the queue bound (as Write counts).
func recordSize(r *Record) int {
	size := recordOverhead + len(r.Frame)
	if r.Text != nil {
		size += len(*r.Text)
	}
	if r.Stderr != nil {
		size += len(*r.Stderr)
	}
	return size
}

// writePart writes a part of a record in pieces: its start, the redacted
// and escaped text of a piece, its end.
func (c *CaptureWriter) writePart(r *Record) error {
	switch r.part {
	case partBegin:
		c.open = true
		buf := AppendRecord(nil, &Record{Seq: r.Seq, TS: r.TS, From: r.From})
		buf = append(buf[:len(buf)-2], `,"text":"`...)
		if c.raw {
			c.text = nil
		} else {
			c.text = NewTextRedactor(c.writeEscaped)
		}
		c.carry = c.carry[:0]
		_, err := c.w.Write(buf)
		return err
	case partPiece:
		if c.text != nil {
			return c.text.Write(r.Frame)
		}
		return c.writeEscaped(r.Frame)
	}
	c.open = false
	var err error
	if c.text != nil {
		err = c.text.Close()
		c.text = nil
	}
	if err == nil && len(c.carry) > 0 {
		c.esc = rawjson.AppendString(c.esc[:0], string(c.carry))
		_, err = c.w.Write(c.esc[1 : len(c.esc)-1])
	}
	if err != nil {
		return err
	}
	end := `"}` + "\n"
	if r.part == partEndCut {
		end = `","cut":true}` + "\n"
	}
	_, err = c.w.WriteString(end)
	return err
}

// writeEscaped writes text as the inside of a JSON string; a character
// the text's end cuts in half waits for its rest.
func (c *CaptureWriter) writeEscaped(text []byte) error {
	if len(c.carry) > 0 {
		c.carry = append(c.carry, text...)
		text = c.carry
	}
	n := len(text)
	for k := 1; k <= utf8.UTFMax && k <= len(text); k++ {
		if utf8.RuneStart(text[len(text)-k]) {
			if !utf8.FullRune(text[len(text)-k:]) {
				n = len(text) - k
			}
			break
		}
	}
	c.esc = rawjson.AppendString(c.esc[:0], string(text[:n]))
	rest := text[n:]
	if len(c.carry) > 0 {
		c.carry = append(c.carry[:0], rest...)
	} else {
		c.carry = append(c.carry, rest...)
	}
	if cap(c.esc) > shrinkAbove {
		defer func() { c.esc = nil }()
	}
	_, err := c.w.Write(c.esc[1 : len(c.esc)-1])
	return err
}

// writeRecord redacts and encodes r and writes it; buf is scratch space.
// A frame is written from its own bytes, not copied into buf.
func (c *CaptureWriter) writeRecord(buf []byte, r *Record) ([]byte, error) {
	if r.Frame != nil {
		if !c.raw {
			r.Frame = Redact(r.Frame)
		}
		// Spliced into "frame", a frame would lose the whitespace around
		// it when read back (and an invalid one would break the line):
		// such frames are kept exactly as a "text" string instead.
		valid := validJSON(r.Frame)
		if !valid || isSpace(r.Frame[0]) || isSpace(r.Frame[len(r.Frame)-1]) {
			text := string(r.Frame)
			if !valid && !c.raw {
				text = RedactText(text)
			}
			r.Frame, r.Text = nil, &text
		}
	} else if !c.raw {
		if r.Text != nil {
			text := RedactText(*r.Text)
			r.Text = &text
		}
		if r.Stderr != nil {
			text := RedactText(*r.Stderr)
			r.Stderr = &text
		}
	}
	if c.sink != nil {
		c.sink(*r)
		return buf, nil
	}
	frame := r.Frame
	r.Frame = nil
	buf = AppendRecord(buf[:0], r)
	if frame == nil {
		_, err := c.w.Write(buf)
		return buf, err
	}
	// The record without its frame ends with "}\n": the frame goes before.
	buf = append(buf[:len(buf)-2], `,"frame":`...)
	if _, err := c.w.Write(buf); err != nil {
		return buf, err
	}
	if _, err := c.w.Write(frame); err != nil {
		return buf, err
	}
	_, err := c.w.WriteString("}\n")
	return buf, err
}

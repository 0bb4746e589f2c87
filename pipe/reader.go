package pipe

import (
	"bytes"
	"errors"
	"fmt"
	"io"
)

// readBufferSize is the read buffer of a Reader: four pipe buffers, so one
// read takes all a fast writer has queued. Frames longer than this are
// assembled separately (see readLong).
const readBufferSize = 256 << 10

// shrinkAbove is the size of an assembly buffer that is released after use,
// so that one 64 MiB frame does not pin 64 MiB for the rest of a session;
// a smaller one is reused for the next long line (file reads, images).
const shrinkAbove = 8 << 20

// maxEmptyReads is how many reads returning nothing in a row a Reader
// accepts before it reports io.ErrNoProgress (as bufio does).
const maxEmptyReads = 100

var bom = []byte{0xEF, 0xBB, 0xBF}

// Reader splits a stream into frames: one frame per line, the line ending
// ("\n" or "\r\n") removed, blank lines dropped, a UTF-8 byte order mark at
// the start of the stream removed (rule F1). There is no size limit (F3):
// memory is proportional to the longest frame. Bytes are not validated; a
// frame is whatever lies between newlines.
type Reader struct {
	src        io.Reader
	buf        []byte // read buffer; unread bytes are buf[r:w]
	r, w       int
	scanned    int    // bytes of buf[r:w] known to hold no newline
	long       []byte // assembly buffer for frames longer than buf
	raw        []byte // the last frame as it lies in buf with its "\n", or nil
	beforeFill func()
	srcErr     error // the source's error, returned once buf is consumed
	started    bool
	// window, when set (SetWindow), is the most of a line ReadFrame
	// returns at once: a longer one is returned in pieces (partial).
	window  int
	win     []byte // the first window of a long line, reused
	partial bool   // the frame last returned continues: ReadPiece
	pending error  // error to return after the final unterminated line
	frames  int64
	lines   int64
}

// NewReader returns a Reader reading from r.
func NewReader(r io.Reader) *Reader { return newReaderSize(r, readBufferSize) }

func newReaderSize(r io.Reader, size int) *Reader {
	return &Reader{src: r, buf: make([]byte, size)}
}

// OnFill sets fn to run every time, before the Reader reads from its source
// or moves the bytes in its buffer: the last moment the slices returned by
// ReadFrame and Raw are valid, and the moment the Reader may block, so the
// moment to write out what they hold and flush (rule P2).
func (r *Reader) OnFill(fn func()) { r.beforeFill = fn }

// ReadFrame returns the next frame. The returned slice aliases the Reader's
// buffers and is valid only until the next call (or the next OnFill
// callback): copy it to keep it. At the end of the stream it returns
// io.EOF; a last line without a final newline is still returned as a
// frame first. Any other read error is returned as is, and a partial line
// read before it is discarded.
func (r *Reader) ReadFrame() ([]byte, error) {
	for r.partial {
		// The caller left a frame unfinished: its rest is no frame.
		if _, err := r.ReadPiece(); err != nil {
			return nil, err
		}
	}
	for {
		r.raw = nil
		if r.pending != nil {
			return nil, r.pending
		}
		line, inBuf, err := r.readLine()
		if r.partial {
			r.lines++
			r.frames++
			if !r.started {
				r.started = true
				line = bytes.TrimPrefix(line, bom)
			}
			return line, nil
		}
		if len(line) > 0 {
			r.lines++
		}
		if err != nil {
			if len(line) == 0 {
				return nil, err
			}
			if !errors.Is(err, io.EOF) {
				// A read that failed mid-line (a deadline, a broken pipe)
				// leaves a truncated frame: never pass it on as a frame.
				return nil, fmt.Errorf("%w (an unterminated line of %d bytes discarded)", err, len(line))
			}
			r.pending = err
		}
		full := line
		if !r.started {
			r.started = true
			line = bytes.TrimPrefix(line, bom)
		}
		line = TrimLineEnding(line)
		if isBlankLine(line) {
			continue
		}
		r.frames++
		if inBuf && len(line) == len(full)-1 {
			// Exactly the frame and "\n": it can be forwarded as it lies.
			r.raw = full
		}
		return line, nil
	}
}

// Raw returns the frame last returned by ReadFrame followed by its "\n",
// as a slice of the read buffer, when the input spelled it exactly so (no
// "\r", no byte order mark, not assembled from several reads); else nil.
// Consecutive raw frames are adjacent in the buffer, so a run of them can
// be written with one write. Valid as long as the frame is.
func (r *Reader) Raw() []byte { return r.raw }

// Buffered reports how many bytes are already read from the underlying
// stream but not yet returned as frames. Zero means the next ReadFrame will
// block on the stream: the moment to flush a writer.
func (r *Reader) Buffered() int { return r.w - r.r }

// Frames returns the number of frames returned so far.
func (r *Reader) Frames() int64 { return r.frames }

// Line returns the 1-based line number, blank lines included, of the frame
// last returned.
func (r *Reader) Line() int64 { return r.lines }

// readLine returns the next line with its "\n" (without one at the end of
// the stream), and whether it lies in buf.
func (r *Reader) readLine() ([]byte, bool, error) {
	if cap(r.long) > shrinkAbove {
		r.long = nil
	}
	for {
		if i := bytes.IndexByte(r.buf[r.r+r.scanned:r.w], '\n'); i >= 0 {
			end := r.r + r.scanned + i + 1
			line := r.buf[r.r:end]
			r.r, r.scanned = end, 0
			return line, true, nil
		}
		r.scanned = r.w - r.r
		if r.srcErr != nil {
			line := r.buf[r.r:r.w]
			r.r, r.scanned = r.w, 0
			return line, true, r.srcErr
		}
		if r.w-r.r == len(r.buf) && r.window > 0 {
			line, err := r.readWindow()
			return line, false, err
		}
		if r.w-r.r == len(r.buf) {
			line, err := r.readLong()
			return line, false, err
		}
		r.fill()
	}
}

// fill reads more into buf, first moving the unread bytes to its start.
func (r *Reader) fill() {
	if r.beforeFill != nil {
		r.beforeFill()
	}
	if r.r > 0 {
		r.w = copy(r.buf, r.buf[r.r:r.w])
		r.r = 0
	}
	n, err := r.read(r.buf[r.w:])
	r.w += n
	r.srcErr = err
}

// read reads into p, retrying reads that return nothing and no error.
func (r *Reader) read(p []byte) (int, error) {
	for range maxEmptyReads {
		if n, err := r.src.Read(p); n > 0 || err != nil {
			return n, err
		}
	}
	return 0, io.ErrNoProgress
}

// readLong assembles a line longer than buf, which buf holds the start
// of. The line is read in blocks that double in size, then copied once
// into a buffer of its exact length: memory stays under twice the line,
// and each byte is copied once (growing one buffer would copy it about
// three times and hold three times the line at the moment of growth). A
// line that fits in the first block is not copied at all.
func (r *Reader) readLong() ([]byte, error) {
	if r.beforeFill != nil {
		r.beforeFill()
	}
	// The first block is the assembly buffer of earlier long lines, if
	// any: a line that fits is read straight into it, no copy and no new
	// memory (fresh pages are what a long line costs most).
	first := r.long[:0]
	if cap(first) < 2*len(r.buf) {
		first = make([]byte, 0, 2*len(r.buf))
	}
	blocks := [][]byte{append(first, r.buf[r.r:r.w]...)}
	total := r.w - r.r
	r.r, r.w, r.scanned = 0, 0, 0
	var err error
	for err == nil {
		b := blocks[len(blocks)-1]
		if len(b) == cap(b) {
			b = make([]byte, 0, min(2*cap(b), 64<<20))
			blocks = append(blocks, b)
		}
		var n int
		// At most a read buffer at a time: what follows the newline
		// must fit back into it.
		n, err = r.read(b[len(b):min(cap(b), len(b)+len(r.buf))])
		if i := bytes.IndexByte(b[len(b):len(b)+n], '\n'); i >= 0 {
			// The bytes after the newline go back to the read buffer, and
			// an error that came with them waits until they are read.
			r.w = copy(r.buf, b[len(b)+i+1:len(b)+n])
			r.srcErr, err = err, nil
			n = i + 1
			blocks[len(blocks)-1] = b[:len(b)+n]
			total += n
			break
		}
		blocks[len(blocks)-1] = b[:len(b)+n]
		total += n
	}
	if len(blocks) == 1 {
		r.long = blocks[0]
		return r.long, err
	}
	r.long = make([]byte, 0, total)
	for _, b := range blocks {
		r.long = append(r.long, b...)
	}
	return r.long, err
}

// SetWindow makes the Reader return a line longer than n bytes in pieces
// (F3: memory bounded by n whatever the frame's size): ReadFrame returns
// its first n bytes (less a final "\r", held back until what follows it
// is known) with Partial true, and ReadPiece the rest, as it arrives. n
// below the read buffer's size is the read buffer's size; 0 turns it off.
func (r *Reader) SetWindow(n int) {
	if n > 0 {
		n = max(n, len(r.buf))
	}
	r.window = n
}

// Partial reports whether the frame last returned (by ReadFrame or
// ReadPiece) continues: ReadPiece returns its next piece. A partial frame
// is never blank-checked whole: one whose first window is blank is still
// returned (the caller sees no JSON in it).
func (r *Reader) Partial() bool { return r.partial }

// ReadPiece returns the next piece of a partial frame, as it lies in the
// read buffer (valid until the next call or OnFill callback, as a frame
// is). The last piece, after which Partial is false, has no line ending;
// it may be empty. At the end of the stream the frame ends with what it
// has (a last line without a newline, as ReadFrame); any other read error
// is returned, and the frame is cut off there.
func (r *Reader) ReadPiece() ([]byte, error) {
	if !r.partial {
		return nil, errors.New("pipe: ReadPiece without a partial frame")
	}
	for {
		if r.r < r.w {
			if i := bytes.IndexByte(r.buf[r.r:r.w], '\n'); i >= 0 {
				piece := r.buf[r.r : r.r+i]
				r.r += i + 1
				r.scanned = 0
				r.partial = false
				return bytes.TrimSuffix(piece, []byte{'\r'}), nil
			}
			end := r.w
			if r.buf[end-1] == '\r' {
				end-- // maybe the "\r" of "\r\n": held back
			}
			if end > r.r {
				piece := r.buf[r.r:end]
				r.r = end
				return piece, nil
			}
		}
		if r.srcErr != nil {
			piece := r.buf[r.r:r.w]
			r.r, r.scanned = r.w, 0
			r.partial = false
			if errors.Is(r.srcErr, io.EOF) {
				r.pending = r.srcErr
				return piece, nil
			}
			return nil, fmt.Errorf("%w (a frame cut off after its first pieces)", r.srcErr)
		}
		r.fill()
	}
}

// Assemble reads the rest of a partial frame whose bytes so far are head
// and returns the frame whole (for a frame a module claims), or, once it
// holds more than limit bytes, what it holds, with Partial still true: the
// caller passes that on and reads the rest with ReadPiece (P6 bounds what
// is held). The result is valid until the next call, as a frame is. As in
// readLong, the bytes are collected in blocks that double in size, then
// copied once into a buffer of the frame's size (memory under twice the
// frame), and the first block is the assembly buffer of earlier frames:
// up to 8 MiB, fresh pages (the dearest part of a long frame) are not
// touched again for every one.
func (r *Reader) Assemble(head []byte, limit int) ([]byte, error) {
	first := r.long[:0]
	if cap(first) < 2*len(head) {
		first = make([]byte, 0, max(2*len(head), 64<<10))
	}
	blocks := [][]byte{append(first, head...)}
	total := len(head)
	for r.partial && total <= limit {
		piece, err := r.ReadPiece()
		if err != nil {
			return nil, err
		}
		total += len(piece)
		for len(piece) > 0 {
			b := blocks[len(blocks)-1]
			if len(b) == cap(b) {
				b = make([]byte, 0, min(2*cap(b), 64<<20))
				blocks = append(blocks, b)
			}
			n := copy(b[len(b):cap(b)], piece)
			blocks[len(blocks)-1] = b[:len(b)+n]
			piece = piece[n:]
		}
	}
	if len(blocks) == 1 {
		r.long = blocks[0]
		return r.long, nil
	}
	r.long = make([]byte, 0, total)
	for _, b := range blocks {
		r.long = append(r.long, b...)
	}
	return r.long, nil
}

// readWindow reads the first window of a line longer than buf (which
// holds its start) into r.win: the whole line if it ends within the
// window (as readLong, no copy beyond it), else its first window, partial.
func (r *Reader) readWindow() ([]byte, error) {
	if r.beforeFill != nil {
		r.beforeFill()
	}
	if cap(r.win) < r.window {
		r.win = make([]byte, 0, r.window)
	}
	b := append(r.win[:0], r.buf[r.r:r.w]...)
	r.r, r.w, r.scanned = 0, 0, 0
	for len(b) < r.window {
		// At most a read buffer at a time: what follows the newline
		// must fit back into it.
		n, err := r.read(b[len(b):min(r.window, len(b)+len(r.buf))])
		if i := bytes.IndexByte(b[len(b):len(b)+n], '\n'); i >= 0 {
			r.w = copy(r.buf, b[len(b)+i+1:len(b)+n])
			r.srcErr = err
			r.win = b[:len(b)+i+1]
			return r.win, nil
		}
		b = b[:len(b)+n]
		if err != nil {
			r.win = b
			return b, err
		}
	}
	if b[len(b)-1] == '\r' {
		// Maybe the "\r" of the line ending: back to the read buffer,
		// where ReadPiece sees what follows it.
		r.buf[0], r.w = '\r', 1
		b = b[:len(b)-1]
	}
	r.win = b
	r.partial = true
	return b, nil
}

// TrimLineEnding removes a final "\n" or "\r\n" from line.
func TrimLineEnding(line []byte) []byte {
	if n := len(line); n > 0 && line[n-1] == '\n' {
		line = line[:n-1]
		if n := len(line); n > 0 && line[n-1] == '\r' {
			line = line[:n-1]
		}
	}
	return line
}

func isBlankLine(line []byte) bool {
	for _, c := range line {
		if !isSpace(c) {
			return false
		}
	}
	return true
}

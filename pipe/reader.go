package pipe

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// readBufferSize is the bufio buffer of a Reader. Frames longer than this are
// assembled in a separate buffer that grows to the longest frame seen.
const readBufferSize = 64 << 10

// shrinkAbove is the size of an assembly buffer that is released after use,
// so that one 64 MiB frame does not pin 64 MiB for the rest of a session.
const shrinkAbove = 4 << 20

var bom = []byte{0xEF, 0xBB, 0xBF}

// Reader splits a stream into frames: one frame per line, the line ending
// ("\n" or "\r\n") removed, blank lines dropped, a UTF-8 byte order mark at
// the start of the stream removed (rule F1). There is no size limit (F3):
// memory is proportional to the longest frame. Bytes are not validated; a
// frame is whatever lies between newlines.
type Reader struct {
	r       *bufio.Reader
	long    []byte // assembly buffer for frames longer than the bufio buffer
	started bool
	pending error // error to return after the final unterminated line
	frames  int64
	lines   int64
}

// NewReader returns a Reader reading from r.
func NewReader(r io.Reader) *Reader {
	return &Reader{r: bufio.NewReaderSize(r, readBufferSize)}
}

// ReadFrame returns the next frame. The returned slice aliases the Reader's
// buffers and is valid only until the next call: copy it to keep it. At the
// end of the stream it returns io.EOF; a last line without a final newline
// is still returned as a frame first. Any other read error is returned
// as is, and a partial line read before it is discarded.
func (r *Reader) ReadFrame() ([]byte, error) {
	for {
		if r.pending != nil {
			return nil, r.pending
		}
		line, err := r.readLine()
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
		if !r.started {
			r.started = true
			line = bytes.TrimPrefix(line, bom)
		}
		line = TrimLineEnding(line)
		if isBlankLine(line) {
			continue
		}
		r.frames++
		return line, nil
	}
}

// Buffered reports how many bytes are already read from the underlying
// stream but not yet returned as frames. Zero means the next ReadFrame will
// block on the stream: the moment to flush a writer.
func (r *Reader) Buffered() int { return r.r.Buffered() }

// Frames returns the number of frames returned so far.
func (r *Reader) Frames() int64 { return r.frames }

// Line returns the 1-based line number, blank lines included, of the frame
// last returned.
func (r *Reader) Line() int64 { return r.lines }

func (r *Reader) readLine() ([]byte, error) {
	if cap(r.long) > shrinkAbove {
		r.long = nil
	}
	line, err := r.r.ReadSlice('\n')
	if !errors.Is(err, bufio.ErrBufferFull) {
		return line, err
	}
	r.long = append(r.long[:0], line...)
	for {
		line, err = r.r.ReadSlice('\n')
		r.long = append(r.long, line...)
		if !errors.Is(err, bufio.ErrBufferFull) {
			return r.long, err
		}
	}
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

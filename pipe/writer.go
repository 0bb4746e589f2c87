package pipe

import (
	"bufio"
	"io"
	"sync"
)

const writeBufferSize = 64 << 10

// Writer writes frames, each followed by "\n". It is safe for concurrent
// use; each call writes its frames contiguously. Writes are buffered and
// flushed when the caller says its input is idle, so a single frame goes
// out at once and a burst goes out in few system calls. The first write
// error sticks: later calls return it.
type Writer struct {
	mu  sync.Mutex
	dst io.Writer
	w   *bufio.Writer
	err error
}

// NewWriter returns a Writer writing to w.
func NewWriter(w io.Writer) *Writer {
	return &Writer{dst: w, w: bufio.NewWriterSize(w, writeBufferSize)}
}

// WriteFrame writes one frame and its newline, then flushes if flush is set.
func (w *Writer) WriteFrame(frame []byte, flush bool) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.write(frame)
	if flush {
		w.flush()
	}
	return w.err
}

// WriteFrames writes frames contiguously (no other caller's frame comes
// between them), then flushes if flush is set.
func (w *Writer) WriteFrames(frames [][]byte, flush bool) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, f := range frames {
		w.write(f)
	}
	if flush {
		w.flush()
	}
	return w.err
}

// WriteRun writes run, whole frames each already followed by its "\n"
// (a run of Reader.Raw frames). With nothing buffered it goes straight to
// the underlying writer in one write, not copied; else after what is
// buffered.
func (w *Writer) WriteRun(run []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	if w.w.Buffered() == 0 {
		if _, err := w.dst.Write(run); err != nil {
			w.err = err
		}
		return w.err
	}
	_, w.err = w.w.Write(run)
	return w.err
}

// Flush writes out anything buffered.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.flush()
	return w.err
}

// Err returns the first write error, if any.
func (w *Writer) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

func (w *Writer) write(frame []byte) {
	if w.err != nil {
		return
	}
	if _, err := w.w.Write(frame); err != nil {
		w.err = err
		return
	}
	w.err = w.w.WriteByte('\n')
}

func (w *Writer) flush() {
	if w.err == nil && w.w.Buffered() > 0 {
		w.err = w.w.Flush()
	}
}

// FrameWriter writes one frame in pieces (a frame streamed as it
// arrives, F3). It holds its Writer from BeginFrame to End: no other
// frame comes between the pieces. Not safe for concurrent use.
type FrameWriter struct{ w *Writer }

// BeginFrame starts a frame written in pieces: what is buffered goes out
// first (P2), then each piece is written as it is given, unbuffered, so
// the reader of the stream gets it at once. Every BeginFrame needs its End.
func (w *Writer) BeginFrame() *FrameWriter {
	w.mu.Lock()
	w.flush()
	return &FrameWriter{w: w}
}

// Write writes a piece of the frame.
func (f *FrameWriter) Write(piece []byte) error {
	w := f.w
	if w.err == nil && len(piece) > 0 {
		_, w.err = w.dst.Write(piece)
	}
	return w.err
}

// End writes the frame's newline (buffered, as a frame's is) and lets
// other frames through again.
func (f *FrameWriter) End() error {
	w := f.w
	if w.err == nil {
		w.err = w.w.WriteByte('\n')
	}
	err := w.err
	w.mu.Unlock()
	return err
}

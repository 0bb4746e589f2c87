package proxy

import (
	"io"
	"runtime"
)

// readAheadChunk is the size of one read of the client's stream.
const readAheadChunk = 64 << 10

// readAhead reads the client's stream on its own goroutine, at most two
// chunks ahead of the loop that relays it, and reports the end of the
// stream as soon as it is read: the client's EOF is seen (and the F5
// grace starts) even while the relay is blocked writing a large frame to
// an agent that does not read its stdin.
type readAhead struct {
	chunks chan readChunk
	free   chan []byte
	stop   <-chan struct{}
	cur    readChunk
	off    int
}

type readChunk struct {
	buf []byte
	n   int
	err error
}

// newReadAhead starts reading src; ended is called once, when a read of
// src fails (io.EOF included), before the relay sees the failure. The
// goroutine stops at stop, or when it is blocked in src.Read, at the next
// read's return.
func newReadAhead(src io.Reader, stop <-chan struct{}, ended func()) *readAhead {
	ra := &readAhead{chunks: make(chan readChunk, 2), free: make(chan []byte, 3), stop: stop}
	for range 3 {
		ra.free <- make([]byte, readAheadChunk)
	}
	go ra.fill(src, ended)
	return ra
}

func (ra *readAhead) fill(src io.Reader, ended func()) {
	for {
		var buf []byte
		select {
		case buf = <-ra.free:
		case <-ra.stop:
			return
		}
		n, err := src.Read(buf)
		if err != nil {
			ended()
		}
		select {
		case ra.chunks <- readChunk{buf: buf, n: n, err: err}:
		case <-ra.stop:
			return
		}
		if err != nil {
			return
		}
		// Let the relay run the chunk on this thread now: the next Read
		// blocks this thread in a system call, and the relay would wait
		// for another thread to be woken to run it (a round trip's
		// latency).
		runtime.Gosched()
	}
}

// Read returns the bytes read ahead, then the error that ended the
// stream. It must not be called concurrently.
func (ra *readAhead) Read(p []byte) (int, error) {
	for ra.off >= ra.cur.n {
		if ra.cur.err != nil {
			return 0, ra.cur.err
		}
		if ra.cur.buf != nil {
			ra.free <- ra.cur.buf
		}
		select {
		case ra.cur = <-ra.chunks:
		case <-ra.stop:
			return 0, io.EOF
		}
		ra.off = 0
	}
	n := copy(p, ra.cur.buf[ra.off:ra.cur.n])
	ra.off += n
	return n, nil
}

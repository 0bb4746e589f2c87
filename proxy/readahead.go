package proxy

import (
	"io"
	"runtime"
	"sync/atomic"
)

// readAheadChunk is the size of one read of the client's stream.
const readAheadChunk = 64 << 10

// maxReadAhead bounds what is read ahead of the relay, in chunks (16 MiB,
// P6): the relay may be blocked writing a long frame, passed on as it
// arrives (F3), to an agent that does not read; the client's EOF behind
// the rest of that frame is still seen if the rest fits here (F5).
const maxReadAhead = (16 << 20) / readAheadChunk

// keptChunks is how many chunk buffers are kept for reuse: more are
// allocated only while the relay lags, and let go after.
const keptChunks = 3

// readAhead reads the client's stream on its own goroutine, ahead of the
// loop that relays it (up to maxReadAhead), and reports the end of the
// stream as soon as it is read: the client's EOF is seen (and the F5
// grace starts) even while the relay is blocked writing a large frame to
// an agent that does not read its stdin.
type readAhead struct {
	chunks chan readChunk
	free   chan []byte
	ahead  atomic.Int32 // chunks handed to the relay and not yet read
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
	ra := &readAhead{chunks: make(chan readChunk, maxReadAhead), free: make(chan []byte, keptChunks), stop: stop}
	for range keptChunks {
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
		default:
			if ra.ahead.Load() < maxReadAhead {
				buf = make([]byte, readAheadChunk)
				break
			}
			select {
			case buf = <-ra.free:
			case <-ra.stop:
				return
			}
		}
		n, err := src.Read(buf)
		ra.ahead.Add(1)
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
			ra.ahead.Add(-1)
			select {
			case ra.free <- ra.cur.buf:
			default: // one of the extra buffers of a lag: let go
			}
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

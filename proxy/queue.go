package proxy

import (
	"sync"
	"time"
)

// maxQueuedBytes bounds what one side's queue holds (P6). Past it, send
// waits until the side reads, as a pipe would: replies are small (an
// answer to a cursor/task is ~40 bytes), so an agent that writes tens of
// thousands of requests before it reads its stdin is still served, and one
// that never reads stalls only itself.
const maxQueuedBytes = 16 << 20

// queuedOverhead is what an entry counts beyond its frames' bytes.
const queuedOverhead = 64

// sendQueue writes frames to one side on its own goroutine. The proxy's
// replies to a frame's sender (the answer to a cursor/task, say) go
// through it, so that a direction's loop never blocks on the other pipe:
// if the agent's stdin is full while the agent waits for its stdout to be
// read, the loop reading that stdout must keep reading.
type sendQueue struct {
	w    frameWriter
	stop <-chan struct{}
	fail func(error)

	mu    sync.Mutex
	items []queued
	bytes int
	added chan struct{} // capacity 1: an item was added
	freed chan struct{} // closed (and replaced) when bytes were freed
}

type queued struct {
	frames [][]byte
	size   int
	synced chan struct{} // closed once everything before it is written and flushed
}

// newSendQueue starts a queue writing to w until stop is closed.
func newSendQueue(w frameWriter, stop <-chan struct{}, fail func(error)) *sendQueue {
	q := &sendQueue{w: w, stop: stop, fail: fail, added: make(chan struct{}, 1), freed: make(chan struct{})}
	go q.run()
	return q
}

func (q *sendQueue) run() {
	for {
		it, ok := q.next()
		if !ok {
			select {
			case <-q.added:
				continue
			case <-q.stop:
				return
			}
		}
		var err error
		if it.frames != nil {
			err = q.w.WriteFrames(it.frames, true)
		} else {
			err = q.w.Flush()
		}
		if err != nil {
			q.fail(err)
		}
		q.mu.Lock()
		q.bytes -= it.size
		close(q.freed)
		q.freed = make(chan struct{})
		q.mu.Unlock()
		if it.synced != nil {
			close(it.synced)
		}
	}
}

func (q *sendQueue) next() (queued, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.items) == 0 {
		return queued{}, false
	}
	it := q.items[0]
	q.items[0] = queued{}
	q.items = q.items[1:]
	return it, true
}

// send queues copies of frames, to be written contiguously and flushed.
// When the queue holds maxQueuedBytes it waits (the side is not reading);
// with limit > 0 it gives up after limit and reports false.
func (q *sendQueue) send(frames [][]byte, limit time.Duration) bool {
	own := make([][]byte, len(frames))
	size := queuedOverhead
	for i, f := range frames {
		own[i] = append([]byte(nil), f...)
		size += len(f) + 1
	}
	return q.put(queued{frames: own, size: size}, limit)
}

func (q *sendQueue) put(it queued, limit time.Duration) bool {
	var timeout <-chan time.Time
	for {
		q.mu.Lock()
		// One entry larger than the cap still goes into an empty queue.
		if q.bytes == 0 || q.bytes+it.size <= maxQueuedBytes {
			q.items = append(q.items, it)
			q.bytes += it.size
			q.mu.Unlock()
			select {
			case q.added <- struct{}{}:
			default:
			}
			return true
		}
		freed := q.freed
		q.mu.Unlock()
		if limit > 0 && timeout == nil {
			timer := time.NewTimer(limit)
			defer timer.Stop()
			timeout = timer.C
		}
		select {
		case <-freed:
		case <-timeout:
			return false
		case <-q.stop:
			return false
		}
	}
}

// sync waits until everything queued so far, and anything the side's
// writer has buffered, is written, or until limit passes; it reports
// whether it finished.
func (q *sendQueue) sync(limit time.Duration) bool {
	done := make(chan struct{})
	start := time.Now()
	if !q.put(queued{size: queuedOverhead, synced: done}, limit) {
		return false
	}
	timer := time.NewTimer(max(limit-time.Since(start), 0))
	defer timer.Stop()
	select {
	case <-done:
		return true
	case <-timer.C:
		return false
	}
}

package proxy

import (
	"time"

	"github.com/acp-normalize/acp-normalize/pipe"
)

// sendQueue writes frames to one side on its own goroutine. The proxy's
// replies to a frame's sender (the answer to a cursor/task, say) go
// through it, so that a direction's loop never blocks on the other pipe:
// if the agent's stdin is full while the agent waits for its stdout to be
// read, the loop reading that stdout must keep reading.
type sendQueue struct {
	w     *pipe.Writer
	items chan queued
	stop  <-chan struct{}
	fail  func(error)
}

type queued struct {
	frames [][]byte
	synced chan struct{} // closed once everything before it is written and flushed
}

// newSendQueue starts a queue writing to w until stop is closed.
func newSendQueue(w *pipe.Writer, stop <-chan struct{}, fail func(error)) *sendQueue {
	q := &sendQueue{w: w, items: make(chan queued, 256), stop: stop, fail: fail}
	go q.run()
	return q
}

func (q *sendQueue) run() {
	for {
		var it queued
		select {
		case it = <-q.items:
		case <-q.stop:
			return
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
		if it.synced != nil {
			close(it.synced)
		}
	}
}

// send queues copies of frames, to be written contiguously and flushed.
// When 256 sends are already waiting it blocks (the side is not reading);
// with limit > 0 it gives up after limit and reports false.
func (q *sendQueue) send(frames [][]byte, limit time.Duration) bool {
	own := make([][]byte, len(frames))
	for i, f := range frames {
		own[i] = append([]byte(nil), f...)
	}
	return q.put(queued{frames: own}, limit)
}

func (q *sendQueue) put(it queued, limit time.Duration) bool {
	select {
	case q.items <- it:
		return true
	default:
	}
	var timeout <-chan time.Time
	if limit > 0 {
		timer := time.NewTimer(limit)
		defer timer.Stop()
		timeout = timer.C
	}
	select {
	case q.items <- it:
		return true
	case <-timeout:
		return false
	case <-q.stop:
		return false
	}
}

// sync waits until everything queued so far, and anything the side's
// writer has buffered, is written, or until limit passes; it reports
// whether it finished.
func (q *sendQueue) sync(limit time.Duration) bool {
	done := make(chan struct{})
	start := time.Now()
	if !q.put(queued{synced: done}, limit) {
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

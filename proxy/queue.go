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
	fail  func(error)
}

type queued struct {
	frames [][]byte
	synced chan struct{} // closed once everything before it is written and flushed
}

func newSendQueue(w *pipe.Writer, fail func(error)) *sendQueue {
	q := &sendQueue{w: w, items: make(chan queued, 256), fail: fail}
	go q.run()
	return q
}

func (q *sendQueue) run() {
	for it := range q.items {
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
func (q *sendQueue) send(frames [][]byte) {
	own := make([][]byte, len(frames))
	for i, f := range frames {
		own[i] = append([]byte(nil), f...)
	}
	q.items <- queued{frames: own}
}

// sync waits until everything queued so far, and anything the side's
// writer has buffered, is written, or until limit passes; it reports
// whether it finished.
func (q *sendQueue) sync(limit time.Duration) bool {
	done := make(chan struct{})
	timer := time.NewTimer(limit)
	defer timer.Stop()
	select {
	case q.items <- queued{synced: done}:
	case <-timer.C:
		return false
	}
	select {
	case <-done:
		return true
	case <-timer.C:
		return false
	}
}

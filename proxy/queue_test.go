package proxy

import (
	"bytes"
	"testing"
	"time"

	"github.com/acp-normalize/acp-normalize/pipe"
)

// gateWriter blocks every write until the test opens the gate.
type gateWriter struct {
	gate chan struct{}
	buf  bytes.Buffer
}

func (w *gateWriter) Write(p []byte) (int, error) {
	<-w.gate
	return w.buf.Write(p)
}

// P6/F5: a queue whose side does not read accepts replies up
// to maxQueuedBytes, however many, then makes the sender wait (a limit
// gives up), and frees the sender once the side reads again.
func TestSendQueueBoundedInBytes(t *testing.T) {
	w := &gateWriter{gate: make(chan struct{})}
	stop := make(chan struct{})
	defer close(stop)
	q := newSendQueue(pipe.NewWriter(w), stop, func(err error) { t.Errorf("write failed: %v", err) })
	reply := []byte(`{"jsonrpc":"2.0","id":12345,"result":{}}`)
	per := len(reply) + 1 + queuedOverhead
	fits := maxQueuedBytes / per
	for i := range fits {
		if !q.send([][]byte{reply}, time.Nanosecond) {
			t.Fatalf("send %d of %d refused: the queue must hold %d bytes", i+1, fits, maxQueuedBytes)
		}
	}
	if q.send([][]byte{reply}, time.Millisecond) {
		t.Fatal("the queue took more than maxQueuedBytes")
	}
	big := make([]byte, maxQueuedBytes+1)
	done := make(chan bool)
	go func() { done <- q.send([][]byte{big}, 0) }()
	close(w.gate) // the side reads again
	if !<-done {
		t.Fatal("a waiting send was not freed when the queue drained")
	}
	if !q.sync(time.Minute) {
		t.Fatal("sync did not finish")
	}
	if n := bytes.Count(w.buf.Bytes(), []byte("\n")); n != fits+1 {
		t.Fatalf("%d frames written, want %d", n, fits+1)
	}
}

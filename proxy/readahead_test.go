package proxy

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"testing/iotest"
)

// FuzzReadAhead: the relay reads through readAhead exactly the bytes of
// the client's stream, in order, then its error, however the stream and
// the relay chunk their reads (F5: read-ahead must not change the stream).
func FuzzReadAhead(f *testing.F) {
	f.Add([]byte(`{"a":1}`+"\n"), uint8(1), uint8(3))
	f.Add(bytes.Repeat([]byte("x"), 3*readAheadChunk+7), uint8(0), uint8(200))
	f.Fuzz(func(t *testing.T, data []byte, srcMode, readSize uint8) {
		var src io.Reader = bytes.NewReader(data)
		switch srcMode % 3 {
		case 1:
			src = iotest.OneByteReader(src)
		case 2:
			src = iotest.DataErrReader(src)
		}
		stop := make(chan struct{})
		defer close(stop)
		ended := make(chan struct{})
		ra := newReadAhead(src, stop, func() { close(ended) })
		buf := make([]byte, int(readSize)+1)
		var got []byte
		for {
			n, err := ra.Read(buf)
			got = append(got, buf[:n]...)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		<-ended // reported once, before (or when) the relay saw the end
		if !bytes.Equal(got, data) {
			t.Fatalf("read %d bytes, want %d", len(got), len(data))
		}
	})
}

// F5: the end of the client's stream is reported while the relay has not
// consumed what came before it (it is blocked writing to the agent).
func TestReadAheadReportsEOFBeforeTheRelayReadsIt(t *testing.T) {
	stop := make(chan struct{})
	defer close(stop)
	ended := make(chan struct{})
	newReadAhead(bytes.NewReader([]byte(`{"id":1,"method":"session/prompt"}`+"\n")), stop, func() { close(ended) })
	<-ended // no Read call: a hang here is the failure
}

package pipe

import (
	"bytes"
	"testing"
)

// TestFrameWriterCut: a frame written in pieces can be cut off from
// another goroutine (the modules' last words at shutdown, F5, C12, while
// the rest of the frame may never come): it ends with a newline there,
// the frames written after the cut stand on lines of their own, the
// frame's later pieces and its End write nothing, and the next frame in
// pieces is whole again.
func TestFrameWriterCut(t *testing.T) {
	tests := []struct {
		name string
		run  func(w *Writer)
		want string
	}{
		{"cut between pieces", func(w *Writer) {
			fw := w.BeginFrame()
			_ = fw.Write([]byte(`{"a":"12`))
			done := make(chan bool)
			go func() {
				done <- w.CutFrame()
				_ = w.WriteFrame([]byte(`{"last":1}`), true)
				close(done)
			}()
			if !<-done {
				t.Error("CutFrame = false with a frame in pieces")
			}
			<-done
			_ = fw.Write([]byte(`34"}`))
			if err := fw.End(); err != nil {
				t.Errorf("End after the cut: %v", err)
			}
			fw = w.BeginFrame()
			_ = fw.Write([]byte(`{"b":1}`))
			_ = fw.End()
			_ = w.Flush()
		}, "{\"a\":\"12\n{\"last\":1}\n{\"b\":1}\n"},
		{"nothing to cut", func(w *Writer) {
			_ = w.WriteFrame([]byte(`{"a":1}`), false)
			if w.CutFrame() {
				t.Error("CutFrame = true with no frame in pieces")
			}
			fw := w.BeginFrame()
			_ = fw.Write([]byte(`{"b":1}`))
			_ = fw.End()
			if w.CutFrame() {
				t.Error("CutFrame = true after the frame's End")
			}
			_ = w.Flush()
		}, "{\"a\":1}\n{\"b\":1}\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			w := NewWriter(&out)
			tt.run(w)
			if got := out.String(); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

package pipe

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func TestReaderRaw(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string // Raw after each frame, "-" for nil
	}{
		{"P1 frame and newline", "{\"a\":1}\n{\"b\":2}\n", []string{"{\"a\":1}\n", "{\"b\":2}\n"}},
		{"F1 crlf is not raw", "{\"a\":1}\r\n{}\n", []string{"-", "{}\n"}},
		{"F1 bom frame is not raw", "\xEF\xBB\xBF{}\n{}\n", []string{"-", "{}\n"}},
		{"no final newline is not raw", "{}\n{}", []string{"{}\n", "-"}},
		{"blank lines skipped", "\n{}\n \n{}\n", []string{"{}\n", "{}\n"}},
		{"line longer than the buffer is not raw", "{\"long\":\"" + strings.Repeat("x", 40) + "\"}\n{}\n", []string{"-", "{}\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rd := newReaderSize(strings.NewReader(tt.in), 32)
			got := frames(t, rd, func([]byte) string {
				if rd.Raw() == nil {
					return "-"
				}
				return string(rd.Raw())
			})
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Fatalf("raw = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestReaderOnFillBeforeBufferChanges: frames returned since the last fill
// are intact when OnFill runs, so a caller can write them out then.
func TestReaderOnFillBeforeBufferChanges(t *testing.T) {
	in := strings.Repeat("{\"n\":12345}\n", 50)
	rd := newReaderSize(iotest.HalfReader(strings.NewReader(in)), 64)
	var held [][]byte // slices of the buffer returned since the last fill
	var want, got []string
	rd.OnFill(func() {
		for _, f := range held {
			got = append(got, string(f))
		}
		held = held[:0]
	})
	for {
		f, err := rd.ReadFrame()
		if err != nil {
			break
		}
		held = append(held, f)
		want = append(want, string(bytes.Clone(f)))
	}
	for _, f := range held {
		got = append(got, string(f))
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") || len(want) != 50 {
		t.Fatalf("frames changed before OnFill: got %q, want %q", got, want)
	}
}

func TestReaderLongLines(t *testing.T) {
	long := "{\"s\":\"" + strings.Repeat("y", 1000) + "\"}"
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"F3 long line then short", long + "\n{}\n", []string{long, "{}"}},
		{"F3 long line, no final newline", "{}\n" + long, []string{"{}", long}},
		{"F3 long crlf line", long + "\r\n{}\n", []string{long, "{}"}},
		{"F3 two long lines", long + "\n" + long + "\n", []string{long, long}},
		{"F1 bom before long line", "\xEF\xBB\xBF" + long + "\n", []string{long}},
	}
	for _, tt := range tests {
		for rname, wrap := range chunkings() {
			t.Run(tt.name+"/"+rname, func(t *testing.T) {
				got := frames(t, newReaderSize(wrap(strings.NewReader(tt.in)), 16), func(f []byte) string { return string(f) })
				if strings.Join(got, "|") != strings.Join(tt.want, "|") {
					t.Fatalf("frames = %q, want %q", got, tt.want)
				}
			})
		}
	}
}

func TestReaderNoProgress(t *testing.T) {
	rd := NewReader(emptyReader{})
	if _, err := rd.ReadFrame(); !errors.Is(err, io.ErrNoProgress) {
		t.Fatalf("err = %v, want io.ErrNoProgress", err)
	}
}

type emptyReader struct{}

func (emptyReader) Read([]byte) (int, error) { return 0, nil }

// relayRuns relays like the proxy's loop: raw frames are collected in runs
// written with WriteRun at OnFill, other frames written one by one.
func relayRuns(in []byte, wrap func(io.Reader) io.Reader, size int) ([]byte, error) {
	var out bytes.Buffer
	rd := newReaderSize(wrap(bytes.NewReader(in)), size)
	w := NewWriter(&out)
	var run []byte
	var werr error
	writeRun := func() {
		if len(run) > 0 && werr == nil {
			werr = w.WriteRun(bytes.Clone(run)) // a clone: a later change to the buffer must not matter
		}
		run = nil
	}
	rd.OnFill(func() {
		writeRun()
		_ = w.Flush()
	})
	err := eachFrame(rd, func(f []byte) error {
		if raw := rd.Raw(); raw != nil {
			if len(run) > 0 && &run[:len(run)+1][len(run)] == &raw[0] {
				run = run[:len(run)+len(raw)]
			} else {
				writeRun()
				run = raw
			}
			return nil
		}
		writeRun()
		return w.WriteFrame(f, false)
	})
	if err != nil {
		return nil, err
	}
	writeRun()
	if werr != nil {
		return nil, werr
	}
	if err := w.Flush(); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// FuzzReaderRuns: with any buffer size (long-line assembly included) and
// any split of the input into reads, runs of raw frames plus the other
// frames are the identity on frames (P1, F1, F3).
func FuzzReaderRuns(f *testing.F) {
	for _, s := range []string{
		"{}\n",
		"\xEF\xBB\xBF{\"a\":1}\r\n\r\n[1,2]\n",
		"{\"id\":-1,\"result\":1e400}\nnot json\n",
		"{\"long\":\"" + strings.Repeat("z", 100) + "\"}\n{}\n{}",
	} {
		f.Add([]byte(s), uint8(0), uint8(3))
	}
	f.Fuzz(func(t *testing.T, in []byte, mode, size uint8) {
		wraps := []func(io.Reader) io.Reader{
			func(r io.Reader) io.Reader { return r },
			iotest.OneByteReader,
			iotest.HalfReader,
			iotest.DataErrReader,
		}
		got, err := relayRuns(in, wraps[int(mode)%len(wraps)], 1+int(size)%64)
		if err != nil {
			t.Fatal(err)
		}
		if want := expectedRelay(in); !bytes.Equal(got, want) {
			t.Fatalf("relay changed the stream\n in: %q\ngot: %q\nwant: %q", in, got, want)
		}
	})
}

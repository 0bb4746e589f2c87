package pipe

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func readAll(t testing.TB, r io.Reader) []string {
	return frames(t, NewReader(r), func(f []byte) string { return string(f) })
}

// frames reads rd to its end and returns what see makes of each frame.
func frames(t testing.TB, rd *Reader, see func(frame []byte) string) []string {
	t.Helper()
	var out []string
	if err := eachFrame(rd, func(f []byte) error { out = append(out, see(f)); return nil }); err != nil {
		t.Fatalf("ReadFrame: %v", err)
	}
	return out
}

// eachFrame calls fn with every frame of rd until io.EOF (nil) or an
// error of either.
func eachFrame(rd *Reader, fn func(frame []byte) error) error {
	for {
		f, err := rd.ReadFrame()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err == nil {
			err = fn(f)
		}
		if err != nil {
			return err
		}
	}
}

// chunkings are the ways the tests hand a reader its input: whole, a
// byte at a time, half of what is asked, and the data with io.EOF.
func chunkings() map[string]func(io.Reader) io.Reader {
	return map[string]func(io.Reader) io.Reader{
		"whole":   func(r io.Reader) io.Reader { return r },
		"onebyte": iotest.OneByteReader,
		"half":    iotest.HalfReader,
		"dataerr": iotest.DataErrReader,
	}
}

func TestReaderFraming(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"empty stream", "", nil},
		{"one frame", "{\"a\":1}\n", []string{`{"a":1}`}},
		{"F1 crlf accepted", "{\"a\":1}\r\n{\"b\":2}\r\n", []string{`{"a":1}`, `{"b":2}`}},
		{"F1 bom stripped at start", "\xEF\xBB\xBF{\"a\":1}\n", []string{`{"a":1}`}},
		{"F1 bom kept mid-stream", "{}\n\xEF\xBB\xBF{}\n", []string{`{}`, "\xEF\xBB\xBF{}"}},
		{"F1 blank lines dropped", "\n\n{}\n\r\n  \t\n{}\n\n", []string{`{}`, `{}`}},
		{"no final newline", "{}\n{\"last\":true}", []string{`{}`, `{"last":true}`}},
		{"invalid utf8 kept", "{\"s\":\"\xff\xfe\"}\n", []string{"{\"s\":\"\xff\xfe\"}"}},
		{"non-json line kept as frame", "Using worktree: /x\n{}\n", []string{"Using worktree: /x", "{}"}},
		{"lone cr inside kept", "{\"a\":\r1}\n", []string{"{\"a\":\r1}"}},
		{"leading spaces kept", "  {}\n", []string{"  {}"}},
	}
	for _, tt := range tests {
		for rname, wrap := range chunkings() {
			t.Run(tt.name+"/"+rname, func(t *testing.T) {
				got := readAll(t, wrap(strings.NewReader(tt.in)))
				if strings.Join(got, "|") != strings.Join(tt.want, "|") || len(got) != len(tt.want) {
					t.Fatalf("frames = %q, want %q", got, tt.want)
				}
			})
		}
	}
}

func TestReaderHugeFrame(t *testing.T) {
	// F3: a 64 MiB line passes whole.
	big := make([]byte, 64<<20)
	for i := range big {
		big[i] = 'x'
	}
	copy(big, `{"s":"`)
	copy(big[len(big)-2:], `"}`)
	in := io.MultiReader(strings.NewReader("{}\n"), bytes.NewReader(big), strings.NewReader("\n{\"after\":1}\n"))
	rd := NewReader(in)
	want := [][]byte{[]byte("{}"), big, []byte(`{"after":1}`)}
	for i, w := range want {
		f, err := rd.ReadFrame()
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		if !bytes.Equal(f, w) {
			t.Fatalf("frame %d: got %d bytes, want %d", i, len(f), len(w))
		}
	}
	if cap(rd.long) > shrinkAbove {
		// The next read releases the big buffer.
		if _, err := rd.ReadFrame(); !errors.Is(err, io.EOF) {
			t.Fatalf("want EOF, got %v", err)
		}
		if rd.long != nil {
			t.Fatal("assembly buffer of the big frame was not released")
		}
	}
}

func TestReaderLineNumbers(t *testing.T) {
	rd := NewReader(strings.NewReader("{}\n\n{}\n"))
	var lines []int64
	for {
		if _, err := rd.ReadFrame(); err != nil {
			break
		}
		lines = append(lines, rd.Line())
	}
	if len(lines) != 2 || lines[0] != 1 || lines[1] != 3 {
		t.Fatalf("lines = %v, want [1 3]", lines)
	}
}

func TestReaderError(t *testing.T) {
	boom := errors.New("boom")
	rd := NewReader(iotest.ErrReader(boom))
	if _, err := rd.ReadFrame(); !errors.Is(err, boom) {
		t.Fatalf("err = %v, want boom", err)
	}
	// A line cut short by an error is not a frame.
	rd = NewReader(io.MultiReader(strings.NewReader("{\"a\":1}\n{\"trunc"), iotest.ErrReader(boom)))
	if f, err := rd.ReadFrame(); err != nil || string(f) != `{"a":1}` {
		t.Fatalf("first frame %q, %v", f, err)
	}
	if f, err := rd.ReadFrame(); !errors.Is(err, boom) || f != nil {
		t.Fatalf("got %q, %v; want the error and no frame", f, err)
	}
}

// relay is the proxy's passthrough with no module: read frames, write them.
func relay(in []byte, wrap func(io.Reader) io.Reader) ([]byte, error) {
	var out bytes.Buffer
	rd := NewReader(wrap(bytes.NewReader(in)))
	w := NewWriter(&out)
	if err := eachFrame(rd, func(f []byte) error { return w.WriteFrame(f, rd.Buffered() == 0) }); err != nil {
		return nil, err
	}
	if err := w.Flush(); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// expectedRelay is the identity on the lines that are not blank, with the
// line endings normalized to "\n" and a leading BOM removed.
func expectedRelay(in []byte) []byte {
	in = bytes.TrimPrefix(in, bom)
	var out []byte
	for _, line := range bytes.SplitAfter(in, []byte("\n")) {
		line = TrimLineEnding(line)
		if isBlankLine(line) {
			continue
		}
		out = append(append(out, line...), '\n')
	}
	return out
}

func FuzzRelayIdentity(f *testing.F) {
	for _, s := range []string{
		"{}\n",
		"{\"jsonrpc\":\"2.0\",\"method\":\"session/update\",\"params\":{\"x\":\"<&>\"}}\n",
		"\xEF\xBB\xBF{\"a\":1}\r\n\r\n[1,2]\n",
		"{\"id\":-1,\"result\":1e400}\nnot json\n",
		"{\"a\":\"\xff\"}",
	} {
		f.Add([]byte(s), uint8(0))
	}
	f.Fuzz(func(t *testing.T, in []byte, mode uint8) {
		wraps := []func(io.Reader) io.Reader{
			func(r io.Reader) io.Reader { return r },
			iotest.OneByteReader,
			iotest.HalfReader,
			iotest.DataErrReader,
		}
		got, err := relay(in, wraps[int(mode)%len(wraps)])
		if err != nil {
			t.Fatal(err)
		}
		if want := expectedRelay(in); !bytes.Equal(got, want) {
			t.Fatalf("relay changed the stream\n in: %q\ngot: %q\nwant: %q", in, got, want)
		}
	})
}

func TestWriterFramesStayContiguous(t *testing.T) {
	var out bytes.Buffer
	w := NewWriter(&out)
	done := make(chan struct{})
	for g := range 4 {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := range 500 {
				a := []byte(strings.Repeat(string(rune('a'+g)), 100+i))
				_ = w.WriteFrames([][]byte{a, a}, i%7 == 0)
			}
		}()
	}
	for range 4 {
		<-done
	}
	_ = w.Flush()
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 4*500*2 {
		t.Fatalf("%d lines", len(lines))
	}
	for i := 0; i < len(lines); i += 2 {
		if lines[i] != lines[i+1] {
			t.Fatalf("a pair of frames was split at line %d", i)
		}
	}
}

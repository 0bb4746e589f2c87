package pipe

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// windowFrames reads rd, whose window is set, to its end: each frame is
// its first window and its pieces joined. It also checks that no partial
// frame's piece is longer than the read buffer and no first window longer
// than the window.
func windowFrames(t testing.TB, rd *Reader) []string {
	t.Helper()
	var out []string
	for {
		f, err := rd.ReadFrame()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("ReadFrame: %v", err)
		}
		if rd.Partial() && len(f) > rd.window {
			t.Fatalf("first window of %d bytes, window %d", len(f), rd.window)
		}
		s := string(f)
		for rd.Partial() {
			p, err := rd.ReadPiece()
			if err != nil {
				t.Fatalf("ReadPiece: %v", err)
			}
			if len(p) > len(rd.buf) {
				t.Fatalf("piece of %d bytes, buffer %d", len(p), len(rd.buf))
			}
			s += string(p)
		}
		if !isBlankLine([]byte(s)) {
			out = append(out, s)
		}
	}
}

// checkWindowed compares the frames of in read with a window (joined) with
// those read whole: the same bytes, the same frames (P1, F1).
func checkWindowed(t *testing.T, in string, bufSize, window int) {
	t.Helper()
	want := readAll(t, strings.NewReader(in))
	for name, chunk := range chunkings() {
		rd := newReaderSize(chunk(strings.NewReader(in)), bufSize)
		rd.SetWindow(window)
		got := windowFrames(t, rd)
		if len(got) != len(want) {
			t.Fatalf("%s: %d frames, want %d: %q, want %q", name, len(got), len(want), got, want)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%s: frame %d is %q, want %q", name, i, got[i], want[i])
			}
		}
	}
}

func TestReaderWindowPiecesAreTheFrame(t *testing.T) {
	long := strings.Repeat("0123456789", 10)
	tests := []struct {
		name string
		in   string
	}{
		{"short lines", "{}\n[1]\n{\"a\":1}\n"},
		{"a line as long as the window", strings.Repeat("x", 32) + "\n{}\n"},
		{"a line one past the window", strings.Repeat("x", 33) + "\n{}\n"},
		{"long lines", long + "\n" + long + long + "\n{}\n"},
		{"crlf", long + "\r\n" + long + "\r\n"},
		{"cr at the window's end", strings.Repeat("y", 31) + "\r\n" + strings.Repeat("y", 32) + "\r\n" + strings.Repeat("y", 47) + "\r\n"},
		{"cr at a piece's end", strings.Repeat("y", 63) + "\r\n" + strings.Repeat("y", 79) + "\rz\r\r\n"},
		{"lone carriage returns", strings.Repeat("\r", 100) + "\n" + long + "\r"},
		{"bom on a long first line", "\xEF\xBB\xBF" + long + "\n{}\n"},
		{"no final newline", "{}\n" + long},
		{"long blank line", strings.Repeat(" ", 100) + "\n{}\n"},
		{"blanks then a frame", strings.Repeat(" ", 40) + "{\"a\":1}\n"},
		{"blank lines", "\n\n" + long + "\n\n\r\n{}\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkWindowed(t, tt.in, 16, 32) })
	}
}

// FuzzReaderWindow: whatever the input, read buffer and window, the pieces
// of a frame joined are the frame a whole read gives (P1).
func FuzzReaderWindow(f *testing.F) {
	f.Add([]byte("{}\n"+strings.Repeat("ab", 40)+"\r\n{}"), uint8(16), uint8(20))
	f.Add([]byte(strings.Repeat("\r", 70)+"\n\xEF\xBB\xBF"), uint8(16), uint8(16))
	f.Fuzz(func(t *testing.T, data []byte, buf, window uint8) {
		checkWindowed(t, string(data), 16+int(buf%64), int(window))
	})
}

func TestReaderAssemble(t *testing.T) {
	frame := `{"a":"` + strings.Repeat("z", 300) + `"}`
	for _, tt := range []struct {
		name  string
		limit int
		whole bool
	}{{"within the limit", 1000, true}, {"past the limit", 100, false}} {
		t.Run(tt.name, func(t *testing.T) {
			rd := newReaderSize(iotest.HalfReader(strings.NewReader(frame+"\r\n{}\n")), 16)
			rd.SetWindow(32)
			head, err := rd.ReadFrame()
			if err != nil || !rd.Partial() {
				t.Fatalf("ReadFrame: %q, %v, partial %v", head, err, rd.Partial())
			}
			got, err := rd.Assemble(head, tt.limit)
			if err != nil {
				t.Fatal(err)
			}
			if rd.Partial() == tt.whole {
				t.Fatalf("partial %v after Assemble", rd.Partial())
			}
			for rd.Partial() {
				p, err := rd.ReadPiece()
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, p...)
			}
			if string(got) != frame {
				t.Fatalf("got %q", got)
			}
			if next, err := rd.ReadFrame(); err != nil || string(next) != "{}" {
				t.Fatalf("next frame %q, %v", next, err)
			}
		})
	}
}

// A read error in the middle of a long frame is returned, not taken for
// the frame's end.
func TestReaderWindowReadErrorCutsTheFrame(t *testing.T) {
	boom := errors.New("boom")
	rd := newReaderSize(io.MultiReader(strings.NewReader(strings.Repeat("x", 100)), iotest.ErrReader(boom)), 16)
	rd.SetWindow(32)
	if _, err := rd.ReadFrame(); err != nil || !rd.Partial() {
		t.Fatalf("ReadFrame: %v, partial %v", err, rd.Partial())
	}
	var err error
	for err == nil && rd.Partial() {
		_, err = rd.ReadPiece()
	}
	if !errors.Is(err, boom) {
		t.Fatalf("got %v, want %v", err, boom)
	}
}

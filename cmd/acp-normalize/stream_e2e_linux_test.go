package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/acp-normalize/acp-normalize/pipe"
)

// TestE2EF3LongLineStreams: a 512 MiB passthrough line goes through the
// real binary byte for byte (P1), before the frame after it (P2), and the
// proxy's peak RSS (VmHWM, read from /proc before it exits) stays within
// 64 MiB: a frame no module claims is passed on as it arrives, in memory
// bounded by the read window, whatever its size (F3). All modules are on.
func TestE2EF3LongLineStreams(t *testing.T) {
	const size = 512 << 20
	const maxPeak = 64 << 20
	s := start(t, script(t, fmt.Sprintf("hugeline %d", size), "wait never"), nil)
	hang := time.AfterFunc(2*time.Minute, func() { _ = s.cmd.Process.Kill() })
	defer hang.Stop()

	expect := func(want []byte, what string) {
		t.Helper()
		got := make([]byte, len(want))
		if _, err := io.ReadFull(s.stdout, got); err != nil {
			t.Fatalf("%s: %v (stderr: %s)", what, err, s.stderr.String())
		}
		if !bytes.Equal(got, want) {
			i := 0
			for i < len(got) && got[i] == want[i] {
				i++
			}
			t.Fatalf("%s differs at byte %d: got %q, want %q", what, i, got[i:min(len(got), i+40)], want[i:min(len(want), i+40)])
		}
	}
	expect([]byte(hugeHead), "the line's head")
	text := size - len(hugeHead) - len(hugeTail) - 1
	for off := 0; off < text; off += len(hugeBlock) {
		expect(hugeBlock[:min(len(hugeBlock), text-off)], fmt.Sprintf("the text at %d", off))
	}
	expect([]byte(hugeTail+"\n"), "the line's end")
	expect([]byte(afterHugeLine), "the frame after it")

	peak := procStatusKiB(t, s.cmd.Process.Pid, "VmHWM") << 10
	t.Logf("a %d MiB line relayed: peak RSS %.1f MiB", size>>20, float64(peak)/(1<<20))
	s.stdin.Close()
	if rest := s.readAll(); rest != "" {
		t.Errorf("after the frames: %q", rest[:min(len(rest), 200)])
	}
	s.wait(time.Minute)
	if peak > maxPeak {
		t.Errorf("peak RSS %.1f MiB relaying a %d MiB line, want at most %d MiB", float64(peak)/(1<<20), size>>20, maxPeak>>20)
	}
	if strings.Contains(s.stderr.String(), "level=WARN") {
		t.Errorf("warnings: %s", s.stderr.String())
	}
}

// TestE2ER2LongLineRecordedInPieces: with --record, a long passthrough
// line is still passed on byte for byte (P1) and recorded, in pieces, as
// one text record: redacted (R2), the secrets that cross the reader's
// 256 KiB pieces included, and the records around it in order (R1).
func TestE2ER2LongLineRecordedInPieces(t *testing.T) {
	const token = "sk-proj-Zq7Zq7Zq7Zq7Zq7Zq7Zq7Zq7Zq7Zq7Zq7Zq7"
	var line bytes.Buffer
	line.WriteString(hugeHead)
	for k := 1; k <= 12; k++ {
		for line.Len() < k*(256<<10)-20 {
			line.Write(hugeBlock[:1000])
		}
		// Across the k-th 256 KiB boundary of the line.
		fmt.Fprintf(&line, ` %s \"api_key\":\"hunter%d\" `, token, k)
	}
	line.WriteString(hugeTail + "\n")
	dir := t.TempDir()
	file := dir + "/long.jsonl"
	if err := os.WriteFile(file, append(line.Bytes(), afterHugeLine...), 0o600); err != nil {
		t.Fatal(err)
	}
	capture := dir + "/capture.jsonl"
	s := start(t, script(t, "outfile "+file), []string{"--record", capture})
	s.stdin.Close()
	if got := s.readAll(); got != line.String()+afterHugeLine {
		t.Fatalf("the client got %d bytes, want the %d of the line and the frame after it", len(got), line.Len()+len(afterHugeLine))
	}
	s.wait(time.Minute)
	data, err := os.ReadFile(capture)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, []byte("Zq7Zq7Zq7")) || bytes.Contains(data, []byte("hunter")) {
		t.Fatal("a secret is in the capture")
	}
	var texts, frames int
	for rec, err := range pipe.NewCaptureReader(bytes.NewReader(data)).Records() {
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case rec.IsInput() && rec.Text != nil:
			texts++
			if !strings.HasPrefix(*rec.Text, hugeHead) || !strings.HasSuffix(*rec.Text, hugeTail) || len(*rec.Text) < line.Len()-1000 {
				t.Fatalf("the long line's record: %d bytes", len(*rec.Text))
			}
		case rec.IsInput() && rec.Frame != nil:
			frames++
			if texts != 1 {
				t.Fatal("the frame after the long line is recorded before it")
			}
		}
	}
	if texts != 1 || frames != 1 {
		t.Fatalf("%d text records and %d frames, want 1 and 1", texts, frames)
	}
}

// TestE2EF3LongFramesBothWays: long frames of the client pass on to the
// agent in pieces too, byte for byte, and come back (the echo agent) in
// order with the short frames around them (P1, P2), whatever their line
// ending; through one proxy and through two in a row (each streams what
// the other streams).
func TestE2EF3LongFramesBothWays(t *testing.T) {
	prompt := func(id int, size int) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"session/prompt","params":{"sessionId":"s","prompt":[{"type":"text","text":"%s"}]}}`,
			id, strings.Repeat(string(hugeBlock[:1000]), size/1000))
	}
	frames := []string{prompt(1, 3<<20), `{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}`, prompt(2, 1<<20+17), prompt(3, 5<<20)}
	for _, tt := range []struct {
		name  string
		flags []string
	}{
		{"one proxy", nil},
		{"two proxies", []string{"--", proxyBinary, "--kill-grace", "30s"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := start(t, script(t, "echo"), tt.flags)
			go func() {
				for i, f := range frames {
					end := "\n"
					if i == 2 {
						end = "\r\n"
					}
					if _, err := io.WriteString(s.stdin, f+end); err != nil {
						return
					}
				}
				s.stdin.Close()
			}()
			for i, want := range frames {
				if got := s.readLine(); got != want {
					t.Fatalf("frame %d: got %d bytes, want %d", i, len(got), len(want))
				}
			}
			if code := s.wait(time.Minute); code != 0 {
				t.Fatalf("exit code %d; stderr:\n%s", code, s.stderr.String())
			}
		})
	}
}

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/route"
)

// exportCaptures are the captures the trace round trip runs on: every
// bundled capture, and the command's own test captures (acpdbg lines,
// non-JSON lines, signal and exit events, recorded settings, a trace of
// two connections).
func exportCaptures(t *testing.T) []string {
	t.Helper()
	files := captureFiles(t, "*/*.jsonl")
	for _, name := range []string{"mock-session", "acpdbg-sample", "plan-signal", "plan-agent-exits", "recorded-settings", "unknown-cursor-method", "inspector-trace"} {
		files = append(files, filepath.Join("testdata", name+".jsonl"))
	}
	files = append(files, filepath.Join("testdata", "v2", "hand-written-session.jsonl"))
	return files
}

// runCLI runs the command in-process and returns its exit code, stdout and
// stderr.
func runCLI(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(append([]string{"acp-normalize"}, args...), strings.NewReader(stdin), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// traceHeader is the header of an acp-inspector-trace file, as its
// documentation (docs/trace-export.md) names the fields.
type traceHeader struct {
	Type     string `json:"type"`
	Format   string `json:"format"`
	Version  int    `json:"version"`
	At       int64  `json:"at"`
	Frames   int64  `json:"frames"`
	Dropped  int64  `json:"dropped"`
	Warning  string `json:"warning"`
	Extended struct {
		Events        []json.RawMessage `json:"events"`
		StderrLines   int64             `json:"stderrLines"`
		OutputRecords int64             `json:"outputRecords"`
	} `json:"acp-normalize"`
}

type traceFrameRecord struct {
	Type       string `json:"type"`
	At         int64  `json:"at"`
	Connection int64  `json:"connection"`
	Direction  string `json:"direction"`
	Encoding   string `json:"encoding"`
	Frame      string `json:"frame"`
}

// TestExportTraceRoundTrip: `export --format acp-inspector-trace -o FILE`
// of every capture writes a mode-0600 file whose header counts its frames
// (and the stderr lines and output records left out), whose frames are
// the capture's input frames verbatim and in order, and whose replay is
// the capture's replay: the same R3 lines, the same changes (diff JSONL
// without the file and line), the same steps but the stderr lines the
// format cannot carry.
func TestExportTraceRoundTrip(t *testing.T) {
	t.Parallel()
	for _, capture := range exportCaptures(t) {
		name := strings.TrimSuffix(filepath.ToSlash(capture), ".jsonl")
		name = name[strings.LastIndex(name[:strings.LastIndex(name, "/")], "/")+1:]
		t.Run(name, func(t *testing.T) {
			tracePath := filepath.Join(t.TempDir(), "trace.jsonl")
			code, stdout, stderr := runBinary(t, "export", "--format", "acp-inspector-trace", "-o", tracePath, capture)
			if code != 0 || stdout != "" {
				t.Fatalf("export: exit %d, stdout %q, stderr %s", code, stdout, stderr)
			}
			if st, err := os.Stat(tracePath); err != nil {
				t.Fatal(err)
			} else if runtime.GOOS != "windows" && st.Mode().Perm() != 0o600 {
				t.Errorf("trace mode %v, want 0600", st.Mode().Perm())
			}
			data, err := os.ReadFile(tracePath)
			if err != nil {
				t.Fatal(err)
			}
			checkTraceFile(t, data, allRecords(t, capture), stderr)

			// What replay prints (R3), and the diff without its file and
			// line, from the real binary; then every step in-process.
			for _, args := range [][]string{{"replay"}, {"replay", "--diff"}} {
				_, fromCapture, _ := runBinary(t, append(args, capture)...)
				code, fromTrace, stderr := runBinary(t, append(args, tracePath)...)
				if code != 0 {
					t.Fatalf("%v of the trace: exit %d: %s", args, code, stderr)
				}
				if withoutPlace(fromTrace) != withoutPlace(fromCapture) {
					t.Errorf("%v: the trace replays to\n%s\nthe capture to\n%s", args, fromTrace, fromCapture)
				}
			}
			wantSteps := replaySteps(t, capture)
			gotSteps := replaySteps(t, tracePath)
			if strings.Join(gotSteps, "\n") != strings.Join(wantSteps, "\n") {
				t.Errorf("steps of the trace:\n%s\nof the capture:\n%s", strings.Join(gotSteps, "\n"), strings.Join(wantSteps, "\n"))
			}
		})
	}
}

// checkTraceFile checks a trace against the capture it was exported from.
func checkTraceFile(t *testing.T, data []byte, recs []pipe.Record, exportStderr string) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	var h traceHeader
	if err := json.Unmarshal([]byte(lines[0]), &h); err != nil {
		t.Fatalf("header %s: %v", lines[0], err)
	}
	if h.Type != "header" || h.Format != "acp-inspector-trace" || h.Version != 1 || h.Warning == "" ||
		time.Since(time.UnixMilli(h.At)) > time.Hour {
		t.Errorf("header %s", lines[0])
	}
	var wantFrames []pipe.Record
	var stderrLines, outputs, dropped int64
	for _, r := range recs {
		switch {
		case r.Event == "dropped":
			dropped += r.Dropped
		case r.Event != "":
		case !r.IsInput():
			outputs++
		case r.Stderr != nil:
			stderrLines++
		default:
			wantFrames = append(wantFrames, r)
		}
	}
	if h.Frames != int64(len(lines)-1) || h.Frames != int64(len(wantFrames)) || h.Dropped != dropped {
		t.Errorf("header counts %d frames, %d dropped; the file has %d frame records, the capture %d input frames, %d dropped",
			h.Frames, h.Dropped, len(lines)-1, len(wantFrames), dropped)
	}
	if h.Extended.StderrLines != stderrLines || h.Extended.OutputRecords != outputs {
		t.Errorf("header says %d stderr lines and %d outputs left out, the capture has %d and %d",
			h.Extended.StderrLines, h.Extended.OutputRecords, stderrLines, outputs)
	}
	if (stderrLines > 0 || outputs > 0) && !strings.Contains(exportStderr, "left out") {
		t.Errorf("export did not say what it left out: %q", exportStderr)
	}
	for i, r := range wantFrames {
		if i+1 >= len(lines) {
			break
		}
		var f traceFrameRecord
		if err := json.Unmarshal([]byte(lines[i+1]), &f); err != nil {
			t.Fatalf("frame record %d: %v", i+1, err)
		}
		want := string(r.Frame)
		if r.Frame == nil {
			want = *r.Text
		} else if r.Frame[0] == '"' {
			_ = json.Unmarshal(r.Frame, &want) // an acpdbg non-JSON line
		}
		dir := map[pipe.Side]string{pipe.Client: "client -> agent", pipe.Agent: "agent -> client"}[r.From]
		if f.Type != "frame" || f.Frame != want || f.Direction != dir || f.Encoding != "utf8" || f.Connection != max(r.Conn, 1) {
			t.Errorf("frame record %d: %s\nwant the frame %s from %v", i+1, lines[i+1], want, r.From)
		}
		if !r.TS.IsZero() && f.At != r.TS.UnixMilli() {
			t.Errorf("frame record %d: at %d, want %d", i+1, f.At, r.TS.UnixMilli())
		}
	}
}

// allRecords reads every record of a capture (routetest.ReadRecords
// keeps only the input frames).
func allRecords(t *testing.T, path string) []pipe.Record {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cr := pipe.NewCaptureReader(f)
	var recs []pipe.Record
	for {
		rec, err := cr.Next()
		if errors.Is(err, io.EOF) {
			return recs
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		recs = append(recs, rec)
	}
}

// withoutPlace drops the file and line members of diff JSONL lines, which
// name the input file.
func withoutPlace(out string) string {
	var sb strings.Builder
	for _, line := range strings.SplitAfter(out, "\n") {
		if strings.HasPrefix(line, `{"file":`) {
			var m map[string]json.RawMessage
			if json.Unmarshal([]byte(line), &m) == nil {
				delete(m, "file")
				delete(m, "line")
				b, _ := json.Marshal(m)
				line = string(b) + "\n"
			}
		}
		sb.WriteString(line)
	}
	return sb.String()
}

// replaySteps replays a capture as `replay` does (its recorded settings)
// and describes each step but the stderr lines: kind, side, input,
// event, exit code, time to the millisecond, and every output.
func replaySteps(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	err = route.ReplayWith(f, func(start *route.Step) (route.RouterConfig, error) {
		mods, options, nonJSON, _ := replaySettings{}.resolve(start)
		return route.RouterConfig{Modules: mods, Settings: options, Version: version, NonJSON: nonJSON}, nil
	}, func(s *route.Step) error {
		if s.Kind == route.StepStderr {
			return nil
		}
		if s.Kind == route.StepError {
			t.Errorf("%s:%d: %v", path, s.Line, s.Err)
			return nil
		}
		d := s.Kind.String() + " " + s.From.String() + " " + string(s.In) + " " + s.Text + " " + s.TS.Truncate(time.Millisecond).String()
		if s.NonJSON {
			d += " non-JSON"
		}
		if s.Code != nil {
			d += " code " + strconv.Itoa(*s.Code)
		}
		for _, o := range s.Outs {
			d += "\n  " + o.Op + " " + o.To.String() + " " + string(o.Frame)
		}
		out = append(out, d)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestExportCommand: the command's output to stdout, its usage errors and
// bad input, by exit code and message.
func TestExportCommand(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		stdin      string
		code       int
		wantStdout string // a substring, "" for none
		wantStderr string
	}{
		{"stdout", []string{"export", "testdata/mock-session.jsonl"}, "", 0, `{"type":"header","format":"acp-inspector-trace","version":1,`, "export: "},
		{"stdin", []string{"export", "-"}, `{"from":"agent","frame":{"a":1}}` + "\n", 0,
			`{"type":"frame","at":0,"connection":1,"direction":"agent -> client","encoding":"utf8","frame":"{\"a\":1}"}`, "export: 1 frames to stdout\n"},
		{"bad_line_reported_rest_exported", []string{"export", "-"}, "nonsense\n" + `{"from":"client","frame":{}}` + "\n", 1, `"frames":1,`, "-:1: not a capture record"},
		{"no_capture", []string{"export"}, "", exitUsage, "", "export: give exactly one capture"},
		{"two_captures", []string{"export", "a", "b"}, "", exitUsage, "", "export: give exactly one capture"},
		{"unknown_format", []string{"export", "--format", "har", "testdata/mock-session.jsonl"}, "", exitUsage, "", `--format must be acp-inspector-trace, not "har"`},
		{"missing_file", []string{"export", "testdata/no-such.jsonl"}, "", exitUsage, "", "export: testdata/no-such.jsonl: no such file or directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tt.stdin, tt.args...)
			if code != tt.code || !strings.Contains(stdout, tt.wantStdout) || tt.wantStdout == "" && stdout != "" || !strings.Contains(stderr, tt.wantStderr) {
				t.Errorf("exit %d (want %d)\nstdout %s\nstderr %s", code, tt.code, stdout, stderr)
			}
		})
	}
}

// TestExportOutputSymlinkRefused: -o never writes through a symbolic link
// (it would truncate what the link points to).
func TestExportOutputSymlinkRefused(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need privileges on Windows")
	}
	dir := t.TempDir()
	target := filepath.Join(dir, "precious")
	if err := os.WriteFile(target, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "trace.jsonl")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI(t, "", "export", "-o", link, "testdata/mock-session.jsonl")
	if b, _ := os.ReadFile(target); code != exitUsage || string(b) != "keep" || !strings.Contains(stderr, "symbolic link") {
		t.Errorf("exit %d, target %q, stderr %s", code, b, stderr)
	}
}

// TestExportOverItsCaptureRefused: -o naming the capture being exported
// (by another path too) is a usage error that leaves the capture as it
// was: the trace carries frames only, so writing it over the capture
// would lose its stderr lines and output records.
func TestExportOverItsCaptureRefused(t *testing.T) {
	dir := t.TempDir()
	capture := filepath.Join(dir, "session.jsonl")
	orig, err := os.ReadFile(filepath.Join("testdata", "mock-session.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(capture, orig, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{capture, filepath.Join(dir, ".", "session.jsonl")} {
		code, stdout, stderr := runCLI(t, "", "export", "-o", out, capture)
		if b, _ := os.ReadFile(capture); code != exitUsage || !bytes.Equal(b, orig) || stdout != "" || !strings.Contains(stderr, "is the capture being exported") {
			t.Errorf("-o %s: exit %d, capture kept %v, stderr %s", out, code, bytes.Equal(b, orig), stderr)
		}
	}
}

// heapWatch is a writer that notes the most heap in use at each write.
type heapWatch struct{ max uint64 }

func (h *heapWatch) Write(p []byte) (int, error) {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	h.max = max(h.max, m.HeapAlloc)
	return len(p), nil
}

// TestExportMemoryOfOneFrame: export holds a frame at a time, not the
// capture (like the proxy, rule F3: memory O(largest frame)): a trace of
// a 16 MiB capture is written while the heap holds a fraction of it more
// than before the export. It once held every frame until the header, which counts them, was written
// (540 MB for a 187 MB capture of a million chunks).
func TestExportMemoryOfOneFrame(t *testing.T) {
	capture := filepath.Join(t.TempDir(), "big.jsonl")
	f, err := os.Create(capture)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Repeat("x", 4<<10)
	const frames = 4 << 10 // 16 MiB of chunks
	w := bufio.NewWriter(f)
	for range frames {
		fmt.Fprintf(w, `{"from":"agent","frame":{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"%s"}}}}}`+"\n", text)
	}
	if err := errors.Join(w.Flush(), f.Close()); err != nil {
		t.Fatal(err)
	}
	defer debug.SetGCPercent(debug.SetGCPercent(10)) // garbage is not what is measured
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before) // what the test binary holds anyway
	var out heapWatch
	var stderr bytes.Buffer
	if code := run([]string{"acp-normalize", "export", capture}, strings.NewReader(""), &out, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if held, limit := out.max-min(out.max, before.HeapAlloc), uint64(frames*len(text)/4); held > limit {
		t.Errorf("export held %d MiB while writing a trace of %d MiB of frames (want under %d MiB)", held>>20, frames*len(text)>>20, limit>>20)
	}
	if !strings.Contains(stderr.String(), fmt.Sprintf("export: %d frames to stdout", frames)) {
		t.Errorf("stderr %q", stderr.String())
	}
}

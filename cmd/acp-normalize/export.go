package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/acp-normalize/acp-normalize/pipe"
)

// exportCommand is `acp-normalize export`: a capture in another tool's
// format.
func exportCommand(st streams) *cli.Command {
	return helpCommand(st, "export", exportAction,
		&cli.StringFlag{Name: "format", Value: pipe.TraceFormat,
			Usage: "the format to write: " + pipe.TraceFormat + " (version 1)"},
		&cli.StringFlag{Name: "output", Aliases: []string{"o"}, TakesFile: true,
			Usage: "write to `FILE` (mode 0600) instead of stdout"},
	)
}

// exportAction reads one capture and writes it as a trace.
func exportAction(c *cli.Context, st streams) error {
	if c.NArg() != 1 {
		return usageError("export: give exactly one capture; usage: acp-normalize export [--format %s] [-o FILE] CAPTURE", pipe.TraceFormat)
	}
	if f := c.String("format"); f != pipe.TraceFormat {
		return usageError("export: --format must be %s, not %q", pipe.TraceFormat, f)
	}
	name := c.Args().First()
	outPath := c.String("output")
	// The capture is read twice: once for the header (it counts the
	// frames and carries the events), once for the frames, so that a
	// frame at a time is held (like the proxy, F3), whatever the
	// capture's length.
	src, done, err := exportSource(name, st.stdin, outPath)
	if err != nil {
		return err
	}
	defer done()
	h, bad, err := readTraceHeader(src, func(line int, err error) {
		if line == 0 {
			printLine(st.stderr, "%s: %v", name, err)
			return
		}
		printLine(st.stderr, "%s:%d: %v", name, line, err)
	})
	if err != nil {
		return &exitError{code: exitFailure, err: fmt.Errorf("export: %s: %w", name, err)}
	}
	h.At = time.Now()
	if _, err := src.Seek(0, io.SeekStart); err != nil {
		return &exitError{code: exitFailure, err: fmt.Errorf("export: %s: %w", name, err)}
	}

	stdout, flushStdout := jsonlOut(st.stdout) // escaped on a terminal only
	out, where := stdout, "stdout"
	var file *recordTarget
	if outPath != "" {
		if file, err = openRecord(outPath); err != nil {
			return usageError("export: -o: %v", err)
		}
		out, where = file, outPath
	}
	werr := writeTrace(out, h, src)
	if file != nil {
		werr = errors.Join(werr, file.Close())
	} else {
		werr = errors.Join(werr, flushStdout())
	}
	if werr != nil {
		return &exitError{code: exitFailure, err: fmt.Errorf("export: writing %s: %w", where, werr)}
	}
	summary := fmt.Sprintf("export: %d frames to %s", h.Frames, where)
	if h.StderrLines > 0 || h.OutputRecords > 0 {
		summary += fmt.Sprintf("; left out %d agent stderr lines and %d proxy output records (the trace format carries frames only; a replay recomputes the outputs)",
			h.StderrLines, h.OutputRecords)
	}
	printLine(st.stderr, "%s", summary) // names the -o file: anybody's bytes
	if bad > 0 {
		return &exitError{code: exitFailure, err: fmt.Errorf("export: %s: %d bad line(s) left out", name, bad)}
	}
	return nil
}

// exportSource opens the capture export reads twice: the file name, or
// stdin for "-". A regular file is read in place (stdin from where it
// stands); anything else (a pipe, a process substitution) is kept in a
// private temporary file that has no name while it is read, so that no
// way out (an error, a signal, SIGKILL, a closed stdout) leaves a copy of
// the session on disk.
func exportSource(name string, stdin io.Reader, outPath string) (io.ReadSeeker, func(), error) {
	if err := checkCaptureNames("export", name); err != nil {
		return nil, nil, err
	}
	in, closeIn, what := stdin, func() {}, "stdin"
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, nil, usageError("export: %s: %v", name, errors.Unwrap(err))
		}
		in, closeIn, what = f, func() { f.Close() }, name
	}
	if f, ok := in.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
			if err := notTheCapture(f, outPath); err != nil {
				closeIn()
				return nil, nil, err
			}
			if at, err := f.Seek(0, io.SeekCurrent); err == nil {
				return io.NewSectionReader(f, at, math.MaxInt64-at), closeIn, nil
			}
		}
	}
	defer closeIn()
	spool, err := os.CreateTemp("", "acp-normalize-export-*.jsonl")
	if err != nil {
		return nil, nil, &exitError{code: exitFailure, err: fmt.Errorf("export: keeping %s for a second reading (set TMPDIR to a writable directory): %w", what, err)}
	}
	done := func() { spool.Close() }
	if os.Remove(spool.Name()) != nil {
		// Windows keeps the name of an open file: remove it after.
		done = func() { spool.Close(); os.Remove(spool.Name()) }
	}
	if _, err := io.Copy(spool, in); err != nil {
		done()
		return nil, nil, &exitError{code: exitFailure, err: fmt.Errorf("export: reading %s: %w", what, err)}
	}
	if _, err := spool.Seek(0, io.SeekStart); err != nil {
		done()
		return nil, nil, &exitError{code: exitFailure, err: fmt.Errorf("export: reading %s again: %w", what, err)}
	}
	return spool, done, nil
}

// notTheCapture refuses an output path that is the capture being
// exported (by any path): the trace carries frames only, so writing it
// over the capture would lose what else the capture holds.
func notTheCapture(capture *os.File, outPath string) error {
	if outPath == "" {
		return nil
	}
	out, err := os.Stat(outPath)
	if err != nil {
		return nil // no such file yet (or openRecord says why)
	}
	if in, err := capture.Stat(); err == nil && os.SameFile(in, out) {
		return usageError("export: -o %s is the capture being exported: the trace would replace it (and it carries frames only)", outPath)
	}
	return nil
}

// traceItems reads a capture (or a trace) and calls frame for each input
// frame, as the side sent it, and event for each event record, with the
// number of frames before it; it counts into h what the trace format
// cannot carry. Bad lines go to report when it is not nil.
func traceItems(in io.Reader, h *pipe.TraceHeader, report func(line int, err error), event func(after int64, rec pipe.Record), frame func(traceFrame) bool) (bad int, err error) {
	cr := pipe.NewCaptureReader(in)
	var frames int64
	for {
		rec, err := cr.Next()
		if errors.Is(err, io.EOF) {
			return bad, nil
		}
		var ce *pipe.CaptureError
		if errors.As(err, &ce) {
			bad++
			if report != nil {
				report(ce.Line, ce.Err)
			}
			continue
		}
		if err != nil {
			return bad, err
		}
		switch {
		case rec.Event != "":
			if event != nil {
				event(frames, rec)
			}
		case !rec.IsInput():
			h.OutputRecords++
		case rec.Stderr != nil:
			h.StderrLines++
		default:
			conn := rec.Conn
			if conn == 0 {
				conn = 1
			}
			b := rec.Frame
			if b == nil {
				b = []byte(*rec.Text)
			} else if pipe.FirstByte(b) == '"' {
				// An acpdbg frame that is a JSON string stands for the
				// non-JSON line it holds (as replay reads it).
				if s, ok := jsonString(b); ok {
					b = []byte(s)
				}
			}
			frames++
			if !frame(traceFrame{at: rec.TS, conn: conn, from: rec.From, bytes: b}) {
				return bad, nil
			}
		}
	}
}

// traceFrame is one frame of a trace being written.
type traceFrame struct {
	at    time.Time
	conn  int64
	from  pipe.Side
	bytes []byte
}

// readTraceHeader reads a capture for its trace header: the frames it
// holds, its events at their places, and counts of what the format
// cannot carry. Bad lines go to report (the first maxReportedLines of
// them) and are counted.
func readTraceHeader(in io.Reader, report func(line int, err error)) (*pipe.TraceHeader, int, error) {
	h := &pipe.TraceHeader{}
	shown := 0
	bad, err := traceItems(in, h, func(line int, err error) {
		if shown++; shown <= maxReportedLines {
			report(line, err)
		}
	}, func(after int64, rec pipe.Record) {
		if rec.Event == "dropped" {
			h.Dropped += rec.Dropped
		}
		h.Events = append(h.Events, pipe.TraceEvent{After: after, Record: eventOnly(rec)})
	}, func(traceFrame) bool {
		h.Frames++
		return true
	})
	if err != nil {
		return nil, bad, err
	}
	if bad > maxReportedLines {
		report(0, fmt.Errorf("%d more bad lines not shown", bad-maxReportedLines))
	}
	return h, bad, nil
}

// jsonString decodes a JSON string.
func jsonString(b []byte) (string, bool) {
	var s string
	return s, json.Unmarshal(b, &s) == nil
}

// eventOnly is an event record as the header keeps it: what the capture
// line said (the reader's line number and connection are not the
// record's).
func eventOnly(r pipe.Record) pipe.Record {
	r.Line, r.Conn = 0, 0
	r.From, r.Frame, r.Text, r.Stderr = 0, nil, nil, nil
	return r
}

// writeTrace writes the trace: its header h, then the frames of the
// capture in, as many as h counts (a capture still being recorded has
// grown since it was counted).
func writeTrace(w io.Writer, h *pipe.TraceHeader, in io.Reader) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	buf := pipe.AppendTraceHeader(nil, h)
	var werr error
	written := int64(0)
	_, err := traceItems(in, &pipe.TraceHeader{}, nil, nil, func(f traceFrame) bool {
		if written == h.Frames {
			return false
		}
		written++
		buf = pipe.AppendTraceFrame(buf, f.at, f.conn, f.from, f.bytes)
		if len(buf) >= 32<<10 {
			if _, werr = bw.Write(buf); werr != nil {
				return false
			}
			buf = buf[:0]
		}
		return true
	})
	if err = errors.Join(werr, err); err != nil {
		return err
	}
	if written != h.Frames {
		return fmt.Errorf("the capture changed while it was exported: %d frames counted, %d read again", h.Frames, written)
	}
	if _, err := bw.Write(buf); err != nil {
		return err
	}
	return bw.Flush()
}

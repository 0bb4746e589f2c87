package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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
	var in io.Reader = st.stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return usageError("export: %s: %v", name, errors.Unwrap(err))
		}
		defer f.Close()
		in = f
	}
	tr, bad, err := readForTrace(in, func(line int, err error) {
		if line == 0 {
			fmt.Fprintf(st.stderr, "%s: %v\n", name, err)
			return
		}
		fmt.Fprintf(st.stderr, "%s:%d: %v\n", name, line, err)
	})
	if err != nil {
		return &exitError{code: exitFailure, err: fmt.Errorf("export: %s: %w", name, err)}
	}
	tr.header.At = time.Now()

	out, where := st.stdout, "stdout"
	var file *os.File
	if path := c.String("output"); path != "" {
		if file, err = openRecord(path); err != nil {
			return usageError("export: -o: %v", err)
		}
		out, where = file, path
	}
	werr := tr.write(out)
	if file != nil {
		werr = errors.Join(werr, file.Close())
	}
	if werr != nil {
		return &exitError{code: exitFailure, err: fmt.Errorf("export: writing %s: %w", where, werr)}
	}
	h := tr.header
	fmt.Fprintf(st.stderr, "export: %d frames to %s", h.Frames, where)
	if h.StderrLines > 0 || h.OutputRecords > 0 {
		fmt.Fprintf(st.stderr, "; left out %d agent stderr lines and %d proxy output records (the trace format carries frames only; a replay recomputes the outputs)",
			h.StderrLines, h.OutputRecords)
	}
	fmt.Fprintln(st.stderr)
	if bad > 0 {
		return &exitError{code: exitFailure, err: fmt.Errorf("export: %s: %d bad line(s) left out", name, bad)}
	}
	return nil
}

// traceFrame is one frame of a trace being written.
type traceFrame struct {
	at    time.Time
	conn  int64
	from  pipe.Side
	bytes []byte
}

// trace is a capture read for writing as a trace.
type trace struct {
	header pipe.TraceHeader
	frames []traceFrame
}

// readForTrace reads a capture (or a trace) into a trace: its input frames
// as the sides sent them, its events in the header at their places, and
// counts of what the format cannot carry. Bad lines go to report (the
// first maxReportedLines of them) and are counted.
func readForTrace(in io.Reader, report func(line int, err error)) (*trace, int, error) {
	tr := &trace{}
	cr := pipe.NewCaptureReader(in)
	bad := 0
	for {
		rec, err := cr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		var ce *pipe.CaptureError
		if errors.As(err, &ce) {
			bad++
			if bad <= maxReportedLines {
				report(ce.Line, ce.Err)
			}
			continue
		}
		if err != nil {
			return nil, bad, err
		}
		switch {
		case rec.Event != "":
			if rec.Event == "dropped" {
				tr.header.Dropped += rec.Dropped
			}
			tr.header.Events = append(tr.header.Events, pipe.TraceEvent{After: int64(len(tr.frames)), Record: eventOnly(rec)})
		case !rec.IsInput():
			tr.header.OutputRecords++
		case rec.Stderr != nil:
			tr.header.StderrLines++
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
			tr.frames = append(tr.frames, traceFrame{at: rec.TS, conn: conn, from: rec.From, bytes: b})
		}
	}
	if bad > maxReportedLines {
		report(0, fmt.Errorf("%d more bad lines not shown", bad-maxReportedLines))
	}
	tr.header.Frames = int64(len(tr.frames))
	return tr, bad, nil
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

// write writes the trace: its header, then its frames.
func (tr *trace) write(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	buf := pipe.AppendTraceHeader(nil, &tr.header)
	for _, f := range tr.frames {
		buf = pipe.AppendTraceFrame(buf, f.at, f.conn, f.from, f.bytes)
		if len(buf) >= 32<<10 {
			if _, err := bw.Write(buf); err != nil {
				return err
			}
			buf = buf[:0]
		}
	}
	if _, err := bw.Write(buf); err != nil {
		return err
	}
	return bw.Flush()
}

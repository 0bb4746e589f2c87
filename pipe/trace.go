package pipe

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"time"
	"unicode/utf8"
)

// The acp-inspector-trace format, version 1 (sagikazarmark/acp-inspector,
// docs/trace-export.md): JSONL, a header record first, then one record per
// frame that crossed the wire, the frame carried verbatim as a JSON string.
// Readers ignore fields they do not know, so acp-normalize keeps what the
// format has no field for (the capture's start, exit and other events) in
// one extra header member, TraceExtKey.
const (
	TraceFormat  = "acp-inspector-trace"
	TraceVersion = 1

	// TraceClientToAgent and TraceAgentToClient are the two directions.
	TraceClientToAgent = "client -> agent"
	TraceAgentToClient = "agent -> client"

	// TraceWarning is the header's warning: what the file holds. The
	// first clause is the inspector's own, word for word.
	TraceWarning = "ACP frames may contain prompts, file contents, and tool output; " +
		"exported from an acp-normalize capture, redacted only as far as that capture was"

	// TraceExtKey is the header member that carries the capture's event
	// records, which the format has no record for.
	TraceExtKey = "acp-normalize"
)

// TraceHeader is the first record of a trace.
type TraceHeader struct {
	// At is when the export was taken.
	At time.Time
	// Frames is the number of frame records that follow; Dropped the
	// number of frames seen but not carried (records the capture writer
	// had to leave out).
	Frames, Dropped int64
	// Events are the capture's event records (start, client-gone, signal,
	// exit, dropped), each after the number of frame records that came
	// before it in the capture.
	Events []TraceEvent
	// StderrLines and OutputRecords count what the capture held that the
	// format cannot carry: agent stderr lines (not frames) and the proxy's
	// output records (a replay recomputes them).
	StderrLines, OutputRecords int64
}

// TraceEvent is an event record of a capture, kept in a trace's header.
type TraceEvent struct {
	After  int64
	Record Record
}

// AppendTraceHeader appends h as a trace's header line.
func AppendTraceHeader(dst []byte, h *TraceHeader) []byte {
	dst = append(dst, `{"type":"header","format":"`+TraceFormat+`","version":`...)
	dst = strconv.AppendInt(dst, TraceVersion, 10)
	dst = append(dst, `,"at":`...)
	dst = strconv.AppendInt(dst, h.At.UnixMilli(), 10)
	dst = append(dst, `,"frames":`...)
	dst = strconv.AppendInt(dst, h.Frames, 10)
	dst = append(dst, `,"dropped":`...)
	dst = strconv.AppendInt(dst, h.Dropped, 10)
	dst = appendField(dst, "warning", TraceWarning)
	dst = append(dst, `,"`+TraceExtKey+`":{"events":[`...)
	for i, e := range h.Events {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"after":`...)
		dst = strconv.AppendInt(dst, e.After, 10)
		dst = append(dst, `,"record":`...)
		dst = bytes.TrimSuffix(AppendRecord(dst, &e.Record), []byte("\n"))
		dst = append(dst, '}')
	}
	dst = append(dst, `],"stderrLines":`...)
	dst = strconv.AppendInt(dst, h.StderrLines, 10)
	dst = append(dst, `,"outputRecords":`...)
	dst = strconv.AppendInt(dst, h.OutputRecords, 10)
	return append(dst, "}}\n"...)
}

// AppendTraceFrame appends one frame record: the frame's bytes as a JSON
// string, verbatim ("encoding":"utf8"), or base64 ("encoding":"base64")
// when they are not valid UTF-8, which a JSON string cannot hold. A zero
// at is written as 0 (the capture had no timestamp).
func AppendTraceFrame(dst []byte, at time.Time, connection int64, from Side, frame []byte) []byte {
	dst = append(dst, `{"type":"frame","at":`...)
	ms := int64(0)
	if !at.IsZero() {
		ms = at.UnixMilli()
	}
	dst = strconv.AppendInt(dst, ms, 10)
	dst = append(dst, `,"connection":`...)
	dst = strconv.AppendInt(dst, connection, 10)
	dir := TraceClientToAgent
	if from == Agent {
		dir = TraceAgentToClient
	}
	dst = appendField(dst, "direction", dir)
	if utf8.Valid(frame) {
		dst = append(dst, `,"encoding":"utf8","frame":`...)
		dst = appendJSONString(dst, string(frame))
	} else {
		dst = append(dst, `,"encoding":"base64","frame":"`...)
		dst = base64.StdEncoding.AppendEncode(dst, frame)
		dst = append(dst, '"')
	}
	return append(dst, '}', '\n')
}

// traceState is a CaptureReader's state while it reads a trace.
type traceState struct {
	header  traceHeaderLine
	pending []traceEventLine // events not yet returned, by position
	frames  int64            // frame records read
	conns   map[string]int64 // connection value -> ordinal
	line    int              // the header's line
}

type traceHeaderLine struct {
	Type    string          `json:"type"`
	Format  string          `json:"format"`
	Version json.RawMessage `json:"version"`
	Frames  *int64          `json:"frames"`
	Ext     *struct {
		Events []traceEventLine `json:"events"`
	} `json:"acp-normalize"`
}

type traceEventLine struct {
	After  int64           `json:"after"`
	Record json.RawMessage `json:"record"`
}

type traceFrameLine struct {
	Type       string          `json:"type"`
	At         json.RawMessage `json:"at"`
	Connection json.RawMessage `json:"connection"`
	Direction  string          `json:"direction"`
	Encoding   string          `json:"encoding"`
	Frame      *string         `json:"frame"`
}

// startTrace reads line as a trace header: nil, nil when it is not one.
// A header of another version is an error that ends the reading: a
// version-1 reader would read such a file wrongly.
func startTrace(b []byte, line int) (*traceState, error) {
	if !bytes.Contains(b, []byte(TraceFormat)) {
		return nil, nil // cheap: captures never hold the name on line 1
	}
	var h traceHeaderLine
	if json.Unmarshal(b, &h) != nil || h.Type != "header" || h.Format != TraceFormat {
		return nil, nil
	}
	if string(h.Version) != strconv.Itoa(TraceVersion) {
		return nil, fmt.Errorf("%s version %s: this acp-normalize reads version %d", TraceFormat, h.Version, TraceVersion)
	}
	ts := &traceState{header: h, conns: map[string]int64{}, line: line}
	if h.Ext != nil {
		ts.pending = h.Ext.Events
		sort.SliceStable(ts.pending, func(i, j int) bool { return ts.pending[i].After < ts.pending[j].After })
	}
	return ts, nil
}

// nextEvent returns the header's next event if it is due (after the
// frames read so far, or at the end: all remaining ones).
func (ts *traceState) nextEvent(atEnd bool) (Record, bool, error) {
	if len(ts.pending) == 0 || !atEnd && ts.pending[0].After > ts.frames {
		return Record{}, false, nil
	}
	e := ts.pending[0]
	ts.pending = ts.pending[1:]
	rec, err := parseCaptureLine(e.Record)
	rec.Line = ts.line
	if err == nil && rec.Event == "" {
		err = errors.New("a header event that is not an event record")
	}
	if err != nil {
		return rec, true, &CaptureError{Line: ts.line, Err: fmt.Errorf("%s event %d: %w", TraceExtKey, e.After, err)}
	}
	return rec, true, nil
}

// frame reads a trace frame record as an input record.
func (ts *traceState) frame(b []byte) (Record, error) {
	var l traceFrameLine
	if err := json.Unmarshal(b, &l); err != nil {
		return Record{}, fmt.Errorf("not a trace record: %w", err)
	}
	switch l.Type {
	case "frame":
	case "header":
		return Record{}, errors.New("a second trace header: one trace per file")
	default:
		return Record{}, fmt.Errorf("unknown trace record type %q", l.Type)
	}
	ts.frames++
	var r Record
	switch l.Direction {
	case TraceClientToAgent:
		r.From = Client
	case TraceAgentToClient:
		r.From = Agent
	default:
		return r, fmt.Errorf("trace frame with direction %q", l.Direction)
	}
	if l.Frame == nil {
		return r, errors.New("trace frame without frame")
	}
	raw := []byte(*l.Frame)
	switch l.Encoding {
	case "utf8", "":
	case "base64":
		dec, err := base64.StdEncoding.DecodeString(*l.Frame)
		if err != nil {
			return r, fmt.Errorf("trace frame in base64: %w", err)
		}
		raw = dec
	default:
		return r, fmt.Errorf("trace frame with encoding %q", l.Encoding)
	}
	var ms int64
	if len(l.At) > 0 && json.Unmarshal(l.At, &ms) == nil && ms != 0 {
		r.TS = time.UnixMilli(ms).UTC()
	}
	if conn := string(l.Connection); conn != "" {
		n, ok := ts.conns[conn]
		if !ok {
			n = int64(len(ts.conns) + 1)
			ts.conns[conn] = n
		}
		r.Conn = n
	}
	if IsJSON(raw) && json.Valid(raw) {
		r.Frame = raw
	} else {
		s := string(raw)
		r.Text = &s
	}
	return r, nil
}

// end checks the header's frame count once the trace is read.
func (ts *traceState) end() error {
	if h := ts.header.Frames; h != nil && *h != ts.frames {
		return &CaptureError{Line: ts.line, Err: fmt.Errorf("the header counts %d frames, the trace holds %d (cut off?)", *h, ts.frames)}
	}
	return nil
}

package pipe

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"strconv"
	"time"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
)

// Ops of output records (rule R1): how an output differs from plain
// forwarding.
const (
	OpReplace = "replace"
	OpDrop    = "drop"
	OpReply   = "reply"
	OpEmit    = "emit"
	OpRequest = "request"
)

// Record is one line of a capture (rule R1). Exactly one of the following
// shapes is used:
//
//   - an input record: From with Frame (a JSON frame), Text (a non-JSON
//     line) or Stderr (an agent stderr line);
//   - an output record: Re, Op and To, with Frame unless Op is drop;
//   - an event record: Event ("start" or "exit") with its fields.
type Record struct {
	// Line is the 1-based line number in the capture file, set when read.
	Line int
	Seq  int64
	TS   time.Time

	From   Side
	Frame  []byte // raw JSON, spliced verbatim
	Text   *string
	Stderr *string

	Re int64
	Op string
	To Side

	Event   string
	Version string
	Argv    []string
	Modules []string
	// NonJSON ("drop" or "forward") and Options (the module flags that
	// were on, e.g. "forward-unknown-vendor-methods") describe a start
	// event's settings, so that a replay can use the same.
	NonJSON string
	Options []string
	// Component marks a start event of a conductor's proxy component
	// (rule K1): no agent command; the agent side's frames are recorded
	// unwrapped, as the modules saw them.
	Component bool
	// IDToken is the token in the ids of the proxy's own requests
	// ("acp-normalize:TOKEN:N", rule C12), for a replay to use the same.
	IDToken string
	// Signal names the signal of a "signal" event.
	Signal string
	Code   *int
	// Dropped is the number of records a "dropped" event stands for: the
	// records numbered just before it, which the capture writer could not
	// keep (see CaptureWriter).
	Dropped int64
	// part marks the pieces of a record written in pieces (a frame that
	// streams, CaptureWriter.BeginText): partBegin, partPiece, partEnd;
	// 0 for a whole record. Only the capture writer sets it.
	part uint8
	// Conn is the connection ordinal (from 1) of a frame read from an
	// acp-inspector trace, which may hold several connections; 0 in a
	// capture, which is one connection.
	Conn int64
}

// IsInput reports whether r is an input record.
func (r *Record) IsInput() bool { return r.From != 0 && r.Event == "" && r.Op == "" }

// AppendRecord appends r as one capture line (with its newline) to dst.
// Frame must be valid JSON; the caller checks (see CaptureWriter).
func AppendRecord(dst []byte, r *Record) []byte {
	dst = append(dst, `{"seq":`...)
	dst = strconv.AppendInt(dst, r.Seq, 10)
	if !r.TS.IsZero() {
		dst = append(dst, `,"ts":"`...)
		dst = r.TS.UTC().AppendFormat(dst, time.RFC3339Nano)
		dst = append(dst, '"')
	}
	if r.Event != "" {
		dst = appendField(dst, "event", r.Event)
		if r.Version != "" {
			dst = appendField(dst, "version", r.Version)
		}
		if r.Argv != nil {
			dst = appendJSONField(dst, "agent", r.Argv)
		}
		if r.Modules != nil {
			dst = appendJSONField(dst, "modules", r.Modules)
		}
		if r.NonJSON != "" {
			dst = appendField(dst, "nonJSON", r.NonJSON)
		}
		if r.Options != nil {
			dst = appendJSONField(dst, "options", r.Options)
		}
		if r.Component {
			dst = append(dst, `,"component":true`...)
		}
		if r.IDToken != "" {
			dst = appendField(dst, "idToken", r.IDToken)
		}
		if r.Signal != "" {
			dst = appendField(dst, "signal", r.Signal)
		}
		if r.Code != nil {
			dst = append(dst, `,"code":`...)
			dst = strconv.AppendInt(dst, int64(*r.Code), 10)
		}
		if r.Dropped != 0 {
			dst = append(dst, `,"dropped":`...)
			dst = strconv.AppendInt(dst, r.Dropped, 10)
		}
	}
	if r.Op != "" {
		dst = append(dst, `,"re":`...)
		dst = strconv.AppendInt(dst, r.Re, 10)
		dst = appendField(dst, "op", r.Op)
		dst = appendField(dst, "to", r.To.String())
	}
	if r.From != 0 {
		dst = appendField(dst, "from", r.From.String())
	}
	switch {
	case r.Frame != nil:
		dst = append(dst, `,"frame":`...)
		dst = append(dst, r.Frame...)
	case r.Text != nil:
		dst = appendField(dst, "text", *r.Text)
	case r.Stderr != nil:
		dst = appendField(dst, "stderr", *r.Stderr)
	}
	return append(dst, '}', '\n')
}

func appendField(dst []byte, key, value string) []byte {
	dst = append(dst, ',', '"')
	dst = append(dst, key...)
	dst = append(dst, '"', ':')
	return appendJSONString(dst, value)
}

func appendJSONField(dst []byte, key string, v any) []byte {
	dst = append(dst, ',', '"')
	dst = append(dst, key...)
	dst = append(dst, '"', ':')
	return appendJSON(dst, v)
}

// appendJSONString appends s as a JSON string without HTML escaping;
// invalid UTF-8 becomes U+FFFD as in encoding/json.
func appendJSONString(dst []byte, s string) []byte { return rawjson.AppendString(dst, s) }

func appendJSON(dst []byte, v any) []byte {
	b, err := rawjson.Marshal(v)
	if err != nil {
		return append(dst, "null"...)
	}
	return append(dst, b...)
}

// CaptureError reports a capture line that could not be read; reading goes
// on with the next line.
type CaptureError struct {
	Line int
	Err  error
}

func (e *CaptureError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }
func (e *CaptureError) Unwrap() error { return e.Err }

// CaptureReader reads capture records. It accepts this project's format and
// the variants of rule R3: seq and ts optional, "raw" as a synonym of
// "text"; and Kandev acpdbg lines ({"ts","direction":"sent"|"received"|
// "stderr"|"meta","frame"}), where sent means client to agent.
type CaptureReader struct {
	r       *Reader
	started bool
	// trace is set when the first line is an acp-inspector-trace header
	// (see trace.go): the records are then read in that format.
	trace *traceState
	ended bool
}

// NewCaptureReader returns a reader of capture records from r.
func NewCaptureReader(r io.Reader) *CaptureReader {
	return &CaptureReader{r: NewReader(r)}
}

type captureLine struct {
	Seq       *int64          `json:"seq"`
	TS        json.RawMessage `json:"ts"`
	From      string          `json:"from"`
	To        string          `json:"to"`
	Direction string          `json:"direction"`
	Frame     json.RawMessage `json:"frame"`
	Text      *string         `json:"text"`
	Raw       *string         `json:"raw"`
	Stderr    *string         `json:"stderr"`
	Re        int64           `json:"re"`
	Op        string          `json:"op"`
	Event     string          `json:"event"`
	Version   string          `json:"version"`
	Agent     []string        `json:"agent"`
	Modules   []string        `json:"modules"`
	NonJSON   string          `json:"nonJSON"`
	Options   []string        `json:"options"`
	IDToken   string          `json:"idToken"`
	Component bool            `json:"component"`
	Signal    string          `json:"signal"`
	Code      *int            `json:"code"`
	Dropped   int64           `json:"dropped"`
}

// Next returns the next record. A malformed line yields a *CaptureError and
// the following call continues after it. At the end it returns io.EOF.
//
// A file whose first line is an acp-inspector-trace v1 header is read as
// a trace: each frame record becomes an input record (From, TS, Conn, and
// Frame or Text), and the event records acp-normalize keeps in the
// header come back in their places. A trace of another version is an
// error that ends the reading.
func (c *CaptureReader) Next() (Record, error) {
	if c.trace != nil {
		if rec, ok, err := c.trace.nextEvent(false); ok {
			return rec, err
		}
	}
	if c.ended {
		return Record{}, io.EOF
	}
	frame, err := c.r.ReadFrame()
	if err != nil {
		if errors.Is(err, io.EOF) && c.trace != nil {
			if rec, ok, err := c.trace.nextEvent(true); ok {
				return rec, err
			}
			c.ended = true
			if err := c.trace.end(); err != nil {
				return Record{}, err
			}
		}
		return Record{}, err
	}
	line := int(c.r.Line())
	if !c.started {
		c.started = true
		ts, err := startTrace(frame, line)
		if err != nil {
			return Record{}, err
		}
		if ts != nil {
			c.trace = ts
			return c.Next()
		}
	}
	var rec Record
	var perr error
	if c.trace != nil {
		rec, perr = c.trace.frame(frame)
	} else {
		rec, perr = parseCaptureLine(frame)
	}
	rec.Line = line
	if perr != nil {
		return rec, &CaptureError{Line: line, Err: perr}
	}
	return rec, nil
}

// Records returns an iterator over the remaining records, each with the
// error Next gives it (a *CaptureError for a malformed line, after which
// the iteration goes on); it ends at io.EOF, which it does not yield, or
// after another read error, which it yields.
func (c *CaptureReader) Records() iter.Seq2[Record, error] {
	return func(yield func(Record, error) bool) {
		for {
			rec, err := c.Next()
			if errors.Is(err, io.EOF) {
				return
			}
			var ce *CaptureError
			if !yield(rec, err) || (err != nil && !errors.As(err, &ce)) {
				return
			}
		}
	}
}

func parseCaptureLine(b []byte) (Record, error) {
	var l captureLine
	if err := json.Unmarshal(b, &l); err != nil {
		return Record{}, fmt.Errorf("not a capture record: %w", err)
	}
	var r Record
	if l.Seq != nil {
		r.Seq = *l.Seq
	}
	r.TS = parseTS(l.TS)
	if l.Frame != nil && !bytes.Equal(l.Frame, []byte("null")) {
		r.Frame = []byte(l.Frame)
	}
	r.Text = l.Text
	if r.Text == nil {
		r.Text = l.Raw
	}
	r.Stderr = l.Stderr
	switch {
	case l.Event != "":
		r.Event, r.Version, r.Argv, r.Modules, r.Code = l.Event, l.Version, l.Agent, l.Modules, l.Code
		r.NonJSON, r.Options, r.Signal, r.IDToken, r.Dropped = l.NonJSON, l.Options, l.Signal, l.IDToken, l.Dropped
		r.Component = l.Component
		return r, nil
	case l.Op != "":
		to, ok := ParseSide(l.To)
		if !ok {
			return r, fmt.Errorf("output record with bad \"to\" %q", l.To)
		}
		r.Re, r.Op, r.To = l.Re, l.Op, to
		return r, nil
	case l.From != "":
		from, ok := ParseSide(l.From)
		if !ok {
			return r, fmt.Errorf("bad \"from\" %q", l.From)
		}
		r.From = from
	case l.Direction != "":
		switch l.Direction {
		case "sent":
			r.From = Client
		case "received":
			r.From = Agent
		case "stderr":
			r.From = Agent
			if r.Stderr == nil {
				s := textOf(l)
				r.Stderr = &s
				r.Frame, r.Text = nil, nil
			}
		case "meta":
			r.Event = "meta"
			r.Frame = nil
			return r, nil
		default:
			return r, fmt.Errorf("unknown direction %q", l.Direction)
		}
	case l.To != "":
		// A replay output line {"to":...,"frame":...}: not an input.
		return r, errors.New("replay output line, not a capture record")
	default:
		return r, errors.New("record has neither from, direction, op nor event")
	}
	if r.Frame == nil && r.Text == nil && r.Stderr == nil {
		return r, errors.New("input record without frame, text or stderr")
	}
	return r, nil
}

func textOf(l captureLine) string {
	switch {
	case l.Text != nil:
		return *l.Text
	case l.Raw != nil:
		return *l.Raw
	case l.Frame != nil:
		var s string
		if json.Unmarshal(l.Frame, &s) == nil {
			return s
		}
		return string(l.Frame)
	}
	return ""
}

// parseTS reads a record's ts: an RFC 3339 string, or a number of Unix
// seconds or (when larger than 1e12) milliseconds, as other tools write.
// A ts it cannot read leaves the record without a time: the frame is
// still good.
func parseTS(raw json.RawMessage) time.Time {
	if len(raw) == 0 || string(raw) == "null" {
		return time.Time{}
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if ts, err := time.Parse(time.RFC3339Nano, s); err == nil {
			return ts
		}
		return time.Time{}
	}
	var n float64
	if json.Unmarshal(raw, &n) != nil || n <= 0 {
		return time.Time{}
	}
	if n > 1e12 {
		return time.UnixMilli(int64(n)).UTC()
	}
	sec := int64(n)
	return time.Unix(sec, int64((n-float64(sec))*1e9)).UTC()
}

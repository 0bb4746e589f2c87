package timeline

import (
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/acp-normalize/acp-normalize/internal/terminal"
	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/route"
)

// Renderer writes the steps of one or more replayed captures.
type Renderer interface {
	// Begin starts a capture named name (its path, as given).
	Begin(name string) error
	// Step renders one step. StepError steps are the caller's to report.
	Step(s *route.Step) error
	// End finishes the capture begun last.
	End() error
}

// Unreadable is implemented by a Renderer whose report must say that a
// line of its capture could not be read (the caller reports the line
// itself): check, which must not call a capture it could not read clean.
// Line 0 is the rest of the file (a read error, a trace of a version it
// cannot read).
type Unreadable interface {
	Unreadable(line int)
}

// JSONL writes rule R3's output: one line per frame a side would have
// received, {"to":"client"|"agent","frame":<the frame's bytes verbatim>}.
// A frame that is not valid JSON (a forwarded non-JSON line, rule F2) is
// written as {"to":...,"text":<JSON string>}. Stderr, events and errors
// produce nothing.
type JSONL struct {
	w   io.Writer
	buf []byte
}

// NewJSONL returns a JSONL renderer writing to w.
func NewJSONL(w io.Writer) *JSONL { return &JSONL{w: w} }

// Begin implements Renderer.
func (j *JSONL) Begin(string) error { return nil }

// End implements Renderer.
func (j *JSONL) End() error { return nil }

// Step implements Renderer.
func (j *JSONL) Step(s *route.Step) error {
	if len(s.Outs) == 0 {
		return nil
	}
	j.buf = j.buf[:0]
	for _, o := range s.Outs {
		j.buf = AppendOutput(j.buf, o.To, o.Frame)
	}
	_, err := j.w.Write(j.buf)
	return err
}

// AppendOutput appends one replay output line (with its newline) to dst:
// `{"to":"client","frame":` + frame + `}`, the frame's bytes spliced
// verbatim (rule P1), or a "text" member when frame is not valid JSON.
func AppendOutput(dst []byte, to pipe.Side, frame []byte) []byte {
	dst = append(dst, `{"to":"`...)
	dst = append(dst, to.String()...)
	dst = append(dst, '"')
	dst = appendFrameMember(dst, frame)
	return append(dst, '}', '\n')
}

// appendFrameMember appends `,"frame":RAW` or `,"text":"..."`.
func appendFrameMember(dst []byte, frame []byte) []byte {
	if json.Valid(frame) {
		dst = append(dst, `,"frame":`...)
		return append(dst, frame...)
	}
	dst = append(dst, `,"text":`...)
	return append(dst, compact(string(frame))...)
}

// Options configure the human renderers.
type Options struct {
	// Color turns on ANSI colours.
	Color bool
	// Modules name and describe the vendor methods (Module.VendorMethods,
	// Module.Summarize); a vendor method of no module is shown by name.
	Modules []rewrite.Module
}

// palette colours text when on.
type palette bool

const (
	ansiReset   = "\x1b[0m"
	ansiBold    = "\x1b[1m"
	ansiDim     = "\x1b[2m"
	ansiRed     = "\x1b[31m"
	ansiGreen   = "\x1b[32m"
	ansiYellow  = "\x1b[33m"
	ansiBlue    = "\x1b[34m"
	ansiMagenta = "\x1b[35m"
	ansiCyan    = "\x1b[36m"
)

func (p palette) paint(code, s string) string {
	if !p || s == "" {
		return s
	}
	return code + s + ansiReset
}

// opStyle is how a change is marked: a symbol, a word and a colour.
var opStyle = map[string][3]string{
	pipe.OpReplace: {"~", "replaced", ansiYellow},
	pipe.OpDrop:    {"✗", "dropped", ansiRed},
	pipe.OpReply:   {"↩", "replied", ansiGreen},
	pipe.OpEmit:    {"+", "emitted", ansiGreen},
	pipe.OpRequest: {"⇄", "requested", ansiBlue},
}

// change is one thing normalization did because of a step.
type change struct {
	op    string
	to    pipe.Side
	frame []byte // nil for a drop
}

// changes lists what normalization did in s: the drop of its input, then
// each output that is not plain forwarding, in order.
func changes(s *route.Step) []change {
	var cs []change
	if s.Kind == route.StepFrame && !s.Delivered() {
		cs = append(cs, change{op: pipe.OpDrop, to: s.From.Other()})
	}
	for _, o := range s.Outs {
		if o.Op != "" {
			cs = append(cs, change{op: o.Op, to: o.To, frame: o.Frame})
		}
	}
	return cs
}

// arrow names the direction of a frame from side from.
func arrow(from pipe.Side) string {
	switch from {
	case pipe.Client:
		return "C→A"
	case pipe.Agent:
		return "A→C"
	}
	return "   "
}

func arrowColor(from pipe.Side) string {
	if from == pipe.Client {
		return ansiCyan
	}
	return ansiMagenta
}

// clock formats timestamps as offsets from the first one of a capture,
// in a column 9 wide. A capture whose first record has no timestamp gets
// no time column at all.
type clock struct {
	base    time.Time
	started bool
	none    bool
}

// offset returns the time column for ts: "" without a clock, blanks for
// a record without a timestamp.
func (c *clock) offset(ts time.Time) string {
	if !c.started {
		c.started, c.none = true, ts.IsZero()
	}
	if c.none {
		return ""
	}
	if ts.IsZero() {
		return strings.Repeat(" ", 9)
	}
	if c.base.IsZero() {
		c.base = ts
	}
	s := "+" + strconv.FormatFloat(ts.Sub(c.base).Seconds(), 'f', 3, 64) + "s"
	if n := 9 - len(s); n > 0 {
		s = strings.Repeat(" ", n) + s
	}
	return s
}

// width is the width of the time column and its separator.
func (c *clock) width() int {
	if c.none {
		return 0
	}
	return 9
}

// endLabel describes what produced the frames of an end step or exit event.
func endLabel(s *route.Step) string {
	if s.Kind == route.StepEnd {
		return "end of capture: the client is gone"
	}
	label := "event " + s.Text
	if s.Connection != 0 {
		label += " " + strconv.FormatInt(s.Connection, 10)
	}
	if s.Signal != "" {
		label += " " + s.Signal
	}
	if s.Version != "" {
		label += ", recorded by acp-normalize " + s.Version
	}
	if s.Modules != nil {
		label += ", modules [" + strings.Join(s.Modules, ",") + "]"
	}
	if s.Argv != nil {
		label += ", agent " + strings.Join(s.Argv, " ")
	}
	if s.Component {
		// K1: the agent side was reached through a conductor; the capture
		// holds its frames unwrapped, as the modules saw them.
		label += ", as a conductor's proxy component (the successor's wrapped frames shown unwrapped)"
	}
	if s.Code != nil {
		label += " code " + strconv.Itoa(*s.Code)
	}
	return terminal.Line(label, 300)
}

// inputSummary describes a step's input and notes request ids.
func inputSummary(s *route.Step, ms *methods) summary {
	if s.NonJSON {
		return summary{head: "non-JSON line", detail: quote(string(s.In))}
	}
	sum := summarize(s.In, s.From.Other(), ms)
	ms.observe(s.From.Other(), s.In)
	return sum
}

// fmtSummary renders a summary on one line: vendor ids may hold newlines.
func fmtSummary(p palette, sum summary) string {
	text := terminal.Line(sum.head, 200)
	head := p.paint(ansiBold, text)
	if sum.isError {
		head = p.paint(ansiRed, text)
	}
	if sum.detail == "" {
		return head
	}
	return head + "  " + terminal.Line(sum.detail, 400)
}

package timeline

import (
	"io"
	"strconv"
	"strings"

	"github.com/acp-normalize/acp-normalize/internal/terminal"
	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/route"
)

// changeLimit is how many characters of a value a pretty change line
// shows, and maxFieldChanges how many field changes of a replace.
const (
	changeLimit     = 96
	maxFieldChanges = 4
)

// Pretty writes a human timeline, one line per frame:
//
//	+0.412s  A→C  result #0 initialize  protocol 1, agent claude 0.101.0
//	           ~ replaced → client
//	               + result.agentCapabilities._meta.acp-normalize = {"modules":["cursor","claude"],"version":"0.1.0"}
//
// time offset from the capture's first timestamp, direction (C→A client
// to agent, A→C agent to client, A! agent stderr, -- an event), the method
// or "result"/"error" with the id (and the method it answers), and a
// summary. Runs of unchanged message or thought chunks of one session are
// collapsed into one line with a count. Below a frame, what the proxy did
// about it: ~ replaced, ✗ dropped, ↩ replied, + emitted, ⇄ requested.
// The frames of a child session (Subagent Sessions) are drawn under the
// launch call that started it, indented with a bar per level and opened
// by a "┌ child session" line.
type Pretty struct {
	w    io.Writer
	p    palette
	ms   *methods
	mods []rewrite.Module
	clk  clock
	run  *chunkRun
	nest *nesting
	// recorded is set once a start event is seen: the capture is the
	// proxy's own recording, so a missing exit record means it was cut.
	recorded bool
	sb       strings.Builder
	err      error
}

// chunkRun is a run of unchanged chunk frames being collapsed.
type chunkRun struct {
	first   *route.Step
	tag     string
	session string
	prefix  string // the nesting of its session
	text    strings.Builder
	count   int
}

// NewPretty returns a Pretty renderer writing to w.
func NewPretty(w io.Writer, opts Options) *Pretty {
	return &Pretty{w: w, p: palette(opts.Color), mods: opts.Modules}
}

// Begin implements Renderer.
func (t *Pretty) Begin(name string) error {
	t.ms, t.clk, t.run, t.nest = newMethods(t.mods), clock{}, nil, newNesting()
	t.line(t.p.paint(ansiBold, "── "+terminal.Text(name)+" ──"))
	return t.flush()
}

// End implements Renderer.
func (t *Pretty) End() error {
	t.endRun()
	t.line("")
	return t.flush()
}

// Step implements Renderer.
func (t *Pretty) Step(s *route.Step) error {
	switch s.Kind {
	case route.StepFrame:
		sum := inputSummary(s, t.ms)
		t.nest.observe(s)
		sid := sessionOf(s)
		if t.collapsible(s, sum) {
			t.addToRun(s, sum, sid)
			return t.flush()
		}
		t.endRun()
		t.childHeader(sid)
		prefix := t.nest.prefix(sid)
		t.frameLine(s, sum, prefix)
		t.changeLines(s, prefix)
	case route.StepStderr:
		t.endRun()
		t.line(t.p.paint(ansiDim, t.clk.offset(s.TS)+"  A!   stderr  "+terminal.Line(s.Text, 160)))
	case route.StepEvent:
		t.recorded = t.recorded || s.Text == "start"
		t.endRun()
		t.line(t.p.paint(ansiDim, t.clk.offset(s.TS)+"  --   "+endLabel(s)))
		t.changeLines(s, "")
	case route.StepEnd:
		t.endRun()
		t.line(t.p.paint(ansiDim, t.clk.offset(s.TS)+"  --   "+cutOffLabel(s, t.recorded)))
		t.changeLines(s, "")
	}
	return t.flush()
}

// cutOffLabel describes the end of a capture that has no exit record. In
// the proxy's own recording (recorded: it has a start event) the proxy
// did not get to write one (it was killed), or the capture was cut; a
// capture made another way (frames only) simply ends. What the modules
// said when replayed as the client leaving follows.
func cutOffLabel(s *route.Step, recorded bool) string {
	label := "capture ends here (no exit record)"
	if recorded {
		label = "capture ends here (no exit record: the proxy was killed?)"
	}
	if len(s.Outs) > 0 {
		label += "; replayed as " + endLabel(s)
	}
	return label
}

// collapsible reports whether s is an unchanged chunk that may join a run.
func (t *Pretty) collapsible(s *route.Step, sum summary) bool {
	switch sum.tag {
	case "agent_message_chunk", "agent_thought_chunk", "user_message_chunk":
	default:
		return false
	}
	return len(s.Outs) == 1 && s.Outs[0].Op == ""
}

func (t *Pretty) addToRun(s *route.Step, sum summary, sid string) {
	if r := t.run; r != nil && r.first.From == s.From && r.tag == sum.tag && r.session == sum.session {
		r.count++
		if r.text.Len() <= 4*textLimit { // only the start is shown
			r.text.WriteString(sum.text)
		}
		return
	}
	t.endRun()
	t.childHeader(sid)
	t.run = &chunkRun{first: s, tag: sum.tag, session: sum.session, prefix: t.nest.prefix(sid), count: 1}
	t.run.text.WriteString(sum.text)
}

func (t *Pretty) endRun() {
	r := t.run
	if r == nil {
		return
	}
	t.run = nil
	head := "session/update " + r.tag
	if r.count > 1 {
		head += " ×" + strconv.Itoa(r.count)
	}
	t.frameLine(r.first, summary{head: head, detail: quote(r.text.String())}, r.prefix)
}

// frameLine writes a frame's line; prefix is the nesting of its session.
func (t *Pretty) frameLine(s *route.Step, sum summary, prefix string) {
	t.line(t.p.paint(ansiDim, t.clk.offset(s.TS)) + "  " + t.p.paint(arrowColor(s.From), arrow(s.From)) + "  " + t.p.paint(ansiDim, prefix) + fmtSummary(t.p, sum))
}

// childHeader opens child session sid before its first frame.
func (t *Pretty) childHeader(sid string) {
	if h := t.nest.header(sid); h != "" {
		t.line(strings.Repeat(" ", t.clk.width()) + "       " + t.p.paint(ansiDim, h))
	}
}

// changeLines writes what the proxy did because of s; prefix is the
// nesting of the frame's session.
func (t *Pretty) changeLines(s *route.Step, prefix string) {
	indent := strings.Repeat(" ", t.clk.width()+5) + t.p.paint(ansiDim, prefix)
	for _, c := range changes(s) {
		st := opStyle[c.op]
		mark := t.p.paint(st[2], st[0]+" "+st[1])
		switch c.op {
		case pipe.OpDrop:
			t.line(indent + mark + " (never reaches " + c.to.String() + ")")
		case pipe.OpReplace:
			t.line(indent + mark + " → " + c.to.String())
			t.replaceLines(indent+"    ", s.In, c.frame)
		default:
			sum := summarize(c.frame, c.to, t.ms)
			t.ms.observe(c.to, c.frame)
			t.line(indent + mark + " → " + c.to.String() + ": " + fmtSummary(t.p, sum))
		}
	}
}

// replaceLines writes the first field changes of a replacement, one a line.
func (t *Pretty) replaceLines(indent string, in, out []byte) {
	fcs := fieldChanges(in, out)
	if len(fcs) == 0 {
		t.line(indent + "(same JSON value, other bytes)")
		return
	}
	for i, fc := range fcs {
		if i == maxFieldChanges {
			t.line(indent + "(" + strconv.Itoa(len(fcs)-i) + " more changes: see --diff)")
			return
		}
		t.line(indent + fc.render(changeLimit))
	}
}

func (t *Pretty) line(s string) {
	t.sb.WriteString(s)
	t.sb.WriteByte('\n')
}

func (t *Pretty) flush() error {
	if t.sb.Len() == 0 || t.err != nil {
		t.sb.Reset()
		return t.err
	}
	_, t.err = io.WriteString(t.w, t.sb.String())
	t.sb.Reset()
	return t.err
}

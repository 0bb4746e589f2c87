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

// diffLimit is how many characters of a value a diff field line shows.
const diffLimit = 200

// Diff writes only what normalization changed, each change next to the
// input frame that caused it:
//
//	capture.jsonl:2  +0.412s  A→C  result #0 initialize  protocol 1
//	  < {"jsonrpc":"2.0","id":0,"result":{...}}
//	  ~ replaced → client
//	  > {"jsonrpc":"2.0","id":0,"result":{...,"_meta":{"acp-normalize":{...}}}}
//	      + result.agentCapabilities._meta.acp-normalize = {...}
//
// "<" is the input as read, ">" a frame the proxy wrote instead or in
// addition, with the field changes of a replacement below it. A capture
// in which nothing changed gets one line saying so.
type Diff struct {
	w       io.Writer
	p       palette
	name    string
	ms      *methods
	mods    []rewrite.Module
	clk     clock
	changed int
	files   int // captures begun, to separate them by a blank line
	sb      strings.Builder
}

// NewDiff returns a Diff renderer writing to w.
func NewDiff(w io.Writer, opts Options) *Diff {
	return &Diff{w: w, p: palette(opts.Color), mods: opts.Modules}
}

// Begin implements Renderer.
func (d *Diff) Begin(name string) error {
	d.name, d.ms, d.clk, d.changed = terminal.Text(name), newMethods(d.mods), clock{}, 0
	if d.files > 0 {
		d.sb.WriteByte('\n')
	}
	d.files++
	return nil
}

// End implements Renderer.
func (d *Diff) End() error {
	if d.changed == 0 {
		d.sb.WriteString(d.p.paint(ansiBold, d.name) + ": normalization changed nothing\n")
	}
	return d.flush()
}

// Step implements Renderer.
func (d *Diff) Step(s *route.Step) error {
	var sum summary
	if s.Kind == route.StepFrame {
		sum = inputSummary(s, d.ms)
	}
	cs := changes(s)
	if len(cs) == 0 {
		// Keep the clock's base at the capture's first timestamp.
		d.clk.offset(s.TS)
		return nil
	}
	if d.changed > 0 {
		d.sb.WriteByte('\n')
	}
	d.changed++
	where := d.name
	if s.Line > 0 {
		where += ":" + strconv.Itoa(s.Line)
	}
	head := d.p.paint(ansiBold, where)
	if off := strings.TrimLeft(d.clk.offset(s.TS), " "); off != "" {
		head += "  " + d.p.paint(ansiDim, off)
	}
	if s.Kind == route.StepFrame {
		head += "  " + d.p.paint(arrowColor(s.From), arrow(s.From)) + "  " + fmtSummary(d.p, sum)
	} else {
		head += "  " + endLabel(s)
	}
	d.sb.WriteString(strings.TrimRight(head, " ") + "\n")
	if s.Kind == route.StepFrame {
		d.sb.WriteString("  " + d.p.paint(ansiDim, "<") + " " + terminal.Text(string(s.In)) + "\n")
	}
	for _, c := range cs {
		st := opStyle[c.op]
		d.sb.WriteString("  " + d.p.paint(st[2], st[0]+" "+st[1]))
		if c.op == pipe.OpDrop {
			d.sb.WriteString(": never reaches " + c.to.String() + "\n")
			continue
		}
		d.sb.WriteString(" → " + c.to.String() + "\n")
		d.sb.WriteString("  " + d.p.paint(st[2], ">") + " " + terminal.Text(string(c.frame)) + "\n")
		if c.op == pipe.OpReplace {
			for _, fc := range fieldChanges(s.In, c.frame) {
				d.sb.WriteString("      " + fc.render(diffLimit) + "\n")
			}
		} else {
			d.ms.observe(c.to, c.frame)
		}
	}
	return d.flush()
}

func (d *Diff) flush() error {
	_, err := io.WriteString(d.w, d.sb.String())
	d.sb.Reset()
	return err
}

// DiffJSONL writes the changes of Diff as JSON, one line per input that
// normalization changed:
//
//	{"file":F,"line":N,"from":"agent","frame":<input>,"changes":[
//	  {"op":"replace","to":"client","frame":<output>},{"op":"drop","to":"client"}]}
//
// A non-JSON input has "text" instead of "frame". Frames the end of the
// connection produced have "end" instead of an input: the event that
// produced them ("client-gone", "signal" or "exit"), or "eof" for the end
// of a capture without an exit event.
type DiffJSONL struct {
	w    io.Writer
	name string
	buf  []byte
}

// NewDiffJSONL returns a DiffJSONL renderer writing to w.
func NewDiffJSONL(w io.Writer) *DiffJSONL { return &DiffJSONL{w: w} }

// Begin implements Renderer.
func (d *DiffJSONL) Begin(name string) error { d.name = name; return nil }

// End implements Renderer.
func (d *DiffJSONL) End() error { return nil }

// Step implements Renderer.
func (d *DiffJSONL) Step(s *route.Step) error {
	cs := changes(s)
	if len(cs) == 0 {
		return nil
	}
	b := append(d.buf[:0], `{"file":`...)
	b = append(b, compact(d.name)...)
	if s.Line > 0 {
		b = append(b, `,"line":`...)
		b = strconv.AppendInt(b, int64(s.Line), 10)
	}
	switch s.Kind {
	case route.StepFrame:
		b = append(b, `,"from":"`...)
		b = append(b, s.From.String()...)
		b = append(b, '"')
		if s.NonJSON {
			b = append(b, `,"text":`...)
			b = append(b, compact(string(s.In))...)
		} else {
			b = appendFrameMember(b, s.In)
		}
	case route.StepEnd:
		b = append(b, `,"end":"eof"`...)
	default:
		b = append(b, `,"end":`...)
		b = append(b, compact(s.Text)...)
	}
	b = append(b, `,"changes":[`...)
	for i, c := range cs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"op":"`...)
		b = append(b, c.op...)
		b = append(b, `","to":"`...)
		b = append(b, c.to.String()...)
		b = append(b, '"')
		if c.frame != nil {
			b = appendFrameMember(b, c.frame)
		}
		b = append(b, '}')
	}
	b = append(b, "]}\n"...)
	d.buf = b
	_, err := d.w.Write(b)
	return err
}

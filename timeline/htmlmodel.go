package timeline

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
	"github.com/acp-normalize/acp-normalize/internal/terminal"
	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/rewrite/meta"
	"github.com/acp-normalize/acp-normalize/route"
)

// The viewer's data model: what the HTML renderer embeds as JSON for the
// page's script. Member names are short because a 100,000-frame capture
// repeats them 100,000 times; viewer.js reads them.

// viewRow is one step of a replay: a frame, a stderr line, an event or
// the end of the capture.
type viewRow struct {
	// Kind is "frame", "stderr", "event" or "end".
	Kind string `json:"k"`
	// Line is the capture line (0 for the end of a capture).
	Line int `json:"l,omitempty"`
	// T is the time in milliseconds since the capture's first timestamp;
	// absent when the record has none.
	T *float64 `json:"t,omitempty"`
	// From is "client" or "agent" for frames and stderr lines.
	From string `json:"d,omitempty"`
	// Head and Detail are the one-line summary the terminal timeline
	// shows (summarize); IsError marks an error response.
	Head    string `json:"h"`
	Detail  string `json:"x,omitempty"`
	IsError bool   `json:"e,omitempty"`
	// Method is a request's or notification's method, or for a response
	// the method of the request it answers; Tag the sessionUpdate kind of
	// a session/update; Session the session the frame is about.
	Method  string `json:"m,omitempty"`
	Tag     string `json:"u,omitempty"`
	Session string `json:"s,omitempty"`
	// Node is 1 + the index of the tree node the row belongs to (0: none).
	Node int `json:"n,omitempty"`
	// Changed is set when the proxy did anything but forward the input.
	Changed bool `json:"c,omitempty"`
	// In is the input as it was on the wire; InEscaped is set instead
	// when those bytes are not valid UTF-8 (\xNN for each invalid byte).
	In        string `json:"i,omitempty"`
	InEscaped string `json:"ix,omitempty"`
	NonJSON   bool   `json:"nj,omitempty"`
	// Outs are what the proxy did about the step: the drop of its input,
	// and every frame it wrote that was not plain forwarding.
	Outs []viewOut `json:"o,omitempty"`
}

// viewOut is one change the proxy made (see changes).
type viewOut struct {
	// Op is pipe.OpReplace, OpDrop, OpReply, OpEmit or OpRequest; To the
	// side the frame went to ("client" or "agent").
	Op     string `json:"op"`
	To     string `json:"to"`
	Head   string `json:"h,omitempty"`
	Detail string `json:"x,omitempty"`
	// Frame is the frame written (none for a drop); Escaped as In.
	Frame   string `json:"f,omitempty"`
	Escaped string `json:"fx,omitempty"`
	// Fields are the field changes of a replacement, one line each.
	Fields []string `json:"fc,omitempty"`
}

// viewHeader describes one capture at the top of the page.
type viewHeader struct {
	Name          string   `json:"name"`
	Client        string   `json:"client,omitempty"`
	ClientVersion string   `json:"clientVersion,omitempty"`
	Agent         string   `json:"agent,omitempty"`
	AgentVersion  string   `json:"agentVersion,omitempty"`
	Protocol      string   `json:"protocol,omitempty"`
	Modules       []string `json:"modules"`
	ProxyVersion  string   `json:"proxyVersion,omitempty"`
	// Subagents says whether the client opted in to standard subagent
	// sessions (rule S0).
	Subagents bool `json:"subagents,omitempty"`
	// Recorded is the capture's start event.
	Recorded *viewRecorded `json:"recorded,omitempty"`
	Start    string        `json:"start,omitempty"`
	End      string        `json:"end,omitempty"`
	// DurationMs spans the first to the last timestamp.
	DurationMs *float64   `json:"durationMs,omitempty"`
	Counts     viewCounts `json:"counts"`
	ExitCode   *int       `json:"exitCode,omitempty"`
	// Ending says how the capture ends: "exit", "cut" (a recording
	// without an exit record: the proxy was killed) or "eof".
	Ending string `json:"ending"`
}

type viewRecorded struct {
	Version string   `json:"version,omitempty"`
	Agent   []string `json:"agent,omitempty"`
	Modules []string `json:"modules,omitempty"`
	NonJSON string   `json:"nonJSON,omitempty"`
	Options []string `json:"options,omitempty"`
}

type viewCounts struct {
	Rows       int `json:"rows"`
	Frames     int `json:"frames"`
	FromClient int `json:"fromClient"`
	FromAgent  int `json:"fromAgent"`
	NonJSON    int `json:"nonJSON"`
	Stderr     int `json:"stderr"`
	Events     int `json:"events"`
	Changed    int `json:"changed"`
	Replaced   int `json:"replaced"`
	Dropped    int `json:"dropped"`
	Replied    int `json:"replied"`
	Emitted    int `json:"emitted"`
	Requested  int `json:"requested"`
}

// viewMeta is everything about a capture but its rows.
type viewMeta struct {
	Header viewHeader  `json:"header"`
	Tree   []*viewNode `json:"tree"`
}

// viewBuilder turns the steps of one capture into rows, a header and a
// subagent tree.
type viewBuilder struct {
	ms       *methods
	base     time.Time
	first    time.Time
	last     time.Time
	header   viewHeader
	tree     *treeBuilder
	rows     int
	recorded bool
}

func newViewBuilder(name string, mods []rewrite.Module) *viewBuilder {
	return &viewBuilder{ms: newMethods(mods), header: viewHeader{Name: name, Modules: []string{}, Ending: "eof"}, tree: newTreeBuilder()}
}

// offset is ts in milliseconds since the capture's first timestamp.
func (b *viewBuilder) offset(ts time.Time) *float64 {
	if ts.IsZero() {
		return nil
	}
	if b.base.IsZero() {
		b.base, b.first = ts, ts
	}
	if ts.After(b.last) {
		b.last = ts
	}
	ms := float64(ts.Sub(b.base).Microseconds()) / 1000
	return &ms
}

// row describes step s, the capture's row number i.
func (b *viewBuilder) row(s *route.Step) viewRow {
	r := viewRow{Line: s.Line, T: b.offset(s.TS)}
	c := &b.header.Counts
	c.Rows++
	switch s.Kind {
	case route.StepFrame:
		r.Kind, r.From = "frame", s.From.String()
		c.Frames++
		if s.From == pipe.Client {
			c.FromClient++
		} else {
			c.FromAgent++
		}
		r.In, r.InEscaped = wireText(s.In)
		r.NonJSON = s.NonJSON
		if s.NonJSON {
			c.NonJSON++
		} else {
			r.Method = b.method(s)
			r.Session = frameSession(s.In)
			b.observeInitialize(s.From, s.In)
		}
		sum := inputSummary(s, b.ms)
		r.Head, r.Detail, r.IsError, r.Tag = sum.head, sum.detail, sum.isError, sum.tag
	case route.StepStderr:
		r.Kind, r.From, r.Head = "stderr", s.From.String(), terminal.Line(s.Text, 2000)
		c.Stderr++
	case route.StepEvent:
		r.Kind, r.Head = "event", endLabel(s)
		c.Events++
		b.event(s)
	case route.StepEnd:
		r.Kind, r.Head = "end", cutOffLabel(s, b.recorded)
		if b.recorded {
			b.header.Ending = "cut"
		}
	}
	r.Changed = s.Changed()
	if r.Changed {
		c.Changed++
	}
	for _, ch := range changes(s) {
		o := viewOut{Op: ch.op, To: ch.to.String()}
		switch ch.op {
		case pipe.OpDrop:
			c.Dropped++
		case pipe.OpReplace:
			c.Replaced++
			for _, fc := range fieldChanges(s.In, ch.frame) {
				o.Fields = append(o.Fields, fc.render(htmlFieldLimit))
			}
		default:
			switch ch.op {
			case pipe.OpReply:
				c.Replied++
			case pipe.OpEmit:
				c.Emitted++
			case pipe.OpRequest:
				c.Requested++
			}
			sum := summarize(ch.frame, ch.to, b.ms)
			b.ms.observe(ch.to, ch.frame)
			o.Head, o.Detail = sum.head, sum.detail
		}
		if ch.frame != nil {
			o.Frame, o.Escaped = wireText(ch.frame)
		}
		r.Outs = append(r.Outs, o)
	}
	for _, o := range s.Outs {
		if o.To == pipe.Client {
			b.observeAdvertisement(o.Frame)
		}
	}
	r.Node = b.tree.step(b.rows, r.T, s) + 1
	b.rows++
	return r
}

// htmlFieldLimit is how many characters of a value a field change shows
// in the viewer (the frames themselves are a click away).
const htmlFieldLimit = 400

// method is the method of a frame, or of the request a response answers.
func (b *viewBuilder) method(s *route.Step) string {
	env := pipe.Peek(s.In)
	switch env.Kind {
	case pipe.Request, pipe.Notification:
		return string(env.Method)
	case pipe.Response:
		return b.ms.response(s.From.Other(), env.ID)
	}
	return ""
}

// event notes what an event record says about the capture.
func (b *viewBuilder) event(s *route.Step) {
	switch s.Text {
	case "start":
		b.recorded = true
		b.header.Recorded = &viewRecorded{Version: s.Version, Agent: s.Argv, Modules: s.Modules, NonJSON: s.Policy, Options: s.Options}
	case "exit":
		b.header.Ending, b.header.ExitCode = "exit", s.Code
	}
}

// observeInitialize reads the client and agent names, versions and the
// protocol from the initialize request and its result.
func (b *viewBuilder) observeInitialize(from pipe.Side, frame []byte) {
	h := &b.header
	env := pipe.Peek(frame)
	switch {
	case env.Kind == pipe.Request && string(env.Method) == "initialize" && from == pipe.Client:
		h.Client, h.ClientVersion = rewrite.PeerInfo(frame, "params", "clientInfo")
		if h.Protocol == "" {
			h.Protocol = rawjson.ScalarText(frame, "params", "protocolVersion")
		}
		caps, ok := rawjson.Lookup(frame, "params", "clientCapabilities")
		if !ok {
			caps, _ = rawjson.Lookup(frame, "params", "capabilities") // v2
		}
		sub, ok := rawjson.Lookup(caps, "subagents")
		metaSub, _ := rawjson.Lookup(caps, "_meta", "subagents")
		h.Subagents = ok && rawjson.FirstByte(sub) == '{' || rawjson.Truthy(metaSub)
	case env.Kind == pipe.Response && from == pipe.Agent && b.ms.response(pipe.Client, env.ID) == "initialize":
		h.Agent, h.AgentVersion = rewrite.PeerInfo(frame, "result", "agentInfo")
		if p := rawjson.ScalarText(frame, "result", "protocolVersion"); p != "" {
			h.Protocol = p
		}
	}
}

// observeAdvertisement reads the modules and version the proxy
// advertised in the initialize result it wrote (rule M): the modules that
// were active in this replay.
func (b *viewBuilder) observeAdvertisement(frame []byte) {
	if !strings.Contains(string(frame[:min(len(frame), 1<<16)]), meta.Key) {
		return
	}
	an, ok := rawjson.Lookup(frame, "result", "agentCapabilities", "_meta", meta.Key)
	if !ok {
		return
	}
	var adv struct {
		Version string   `json:"version"`
		Modules []string `json:"modules"`
	}
	if json.Unmarshal(an, &adv) == nil && adv.Modules != nil {
		b.header.Modules, b.header.ProxyVersion = adv.Modules, adv.Version
	}
}

// meta finishes the capture's header and tree.
func (b *viewBuilder) meta() viewMeta {
	h := b.header
	if !b.first.IsZero() {
		h.Start, h.End = b.first.UTC().Format(time.RFC3339Nano), b.last.UTC().Format(time.RFC3339Nano)
		d := float64(b.last.Sub(b.first).Microseconds()) / 1000
		h.DurationMs = &d
	}
	return viewMeta{Header: h, Tree: b.tree.finish()}
}

// frameSession is the session a frame is about: params.sessionId, or a
// result's sessionId (session/new).
func frameSession(frame []byte) string {
	if s, ok := rawjson.LookupString(frame, "params", "sessionId"); ok {
		return s
	}
	s, _ := rawjson.LookupString(frame, "result", "sessionId")
	return s
}

// wireText returns bytes as text for the page: the text itself when it is
// valid UTF-8 (escaped is ""), else "" and the text with each invalid
// byte written \xNN, so that nothing is silently replaced.
func wireText(b []byte) (text, escaped string) {
	if utf8.Valid(b) {
		return string(b), ""
	}
	var sb strings.Builder
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if r == utf8.RuneError && size == 1 {
			sb.WriteString(`\x`)
			sb.WriteString(strconv.FormatUint(uint64(b[0])|0x100, 16)[1:])
		} else {
			sb.Write(b[:size])
		}
		b = b[size:]
	}
	return "", sb.String()
}

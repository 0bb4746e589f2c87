package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/acp-normalize/acp-normalize/internal/terminal"
	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite"
)

// probeReport is what the probe found; --json prints it as it is.
type probeReport struct {
	Argv            []string        `json:"argv"`
	Agent           *probeAgent     `json:"agent,omitempty"`
	ProtocolVersion json.RawMessage `json:"protocolVersion,omitempty"`
	Modules         []probeModule   `json:"modules,omitempty"`
	// Advertised is the proxy's initialize advertisement (rule M).
	Advertised json.RawMessage `json:"advertised,omitempty"`
	// NativeSubagentSessions: the initialize result carries
	// agentCapabilities.sessionCapabilities.subagents.
	NativeSubagentSessions bool            `json:"nativeSubagentSessions"`
	AuthMethods            []probeAuth     `json:"authMethods"`
	AuthRequired           bool            `json:"authRequired"`
	VendorMethods          []probeMethod   `json:"vendorMethods"`
	Session                *probeSession   `json:"session,omitempty"`
	Exit                   *probeExit      `json:"exit,omitempty"`
	StderrLines            int             `json:"stderrLines"`
	Stderr                 []string        `json:"stderr,omitempty"`  // the last lines
	NonJSON                []string        `json:"nonJSON,omitempty"` // lines on stdout that were no frame (F2)
	InitializeMS           int64           `json:"initializeMs,omitempty"`
	Initialize             json.RawMessage `json:"initialize,omitempty"` // the result, as the client got it
	Failure                string          `json:"failure,omitempty"`

	// AgentFrames counts the JSON frames the agent wrote.
	AgentFrames int `json:"-"`
}

type probeAgent struct {
	Name    string `json:"name,omitempty"`
	Title   string `json:"title,omitempty"`
	Version string `json:"version,omitempty"`
}

// probeModule says whether a module acts on the agent: "acts" (its
// agentInfo.name or --vendor, V1), "any-agent" (it checks no name and acts
// on the frames it knows, from any agent) or "off".
type probeModule struct {
	Name  string `json:"name"`
	State string `json:"state"`
	Why   string `json:"why"`
}

type probeAuth struct {
	ID          string `json:"id"`
	Name        string `json:"name,omitempty"`
	Description string `json:"description,omitempty"`
	// Type is "terminal" for a login the user runs as the agent's
	// command with Args; empty (the default, "agent") otherwise.
	Type string   `json:"type,omitempty"`
	Args []string `json:"args,omitempty"`
}

// probeMethod is a method outside ACP's lists the agent sent, and what
// the proxy did with it.
type probeMethod struct {
	Method   string `json:"method"`
	Kind     string `json:"kind"`
	Handling string `json:"handling"`
}

type probeSession struct {
	ID           string   `json:"sessionId,omitempty"`
	Modes        []string `json:"modes,omitempty"`
	CurrentMode  string   `json:"currentMode,omitempty"`
	Models       []string `json:"models,omitempty"`
	CurrentModel string   `json:"currentModel,omitempty"`
	MS           int64    `json:"ms,omitempty"`
	Error        string   `json:"error,omitempty"`
}

type probeExit struct {
	Code int `json:"code"`
	// AfterMS is how long the agent took to exit after its stdin closed
	// (with SIGTERM and SIGKILL after the grace, F5).
	AfterMS int64 `json:"afterMs"`
	GraceMS int64 `json:"graceMs"`
}

// stderrKept is how many of the agent's last stderr lines the report keeps.
const stderrKept = 40

// probeKept bounds the capture lines other than stderr that the probe
// keeps for its report (P6): an agent that floods the probe with frames
// has the rest left out.
const probeKept = 16 << 20

// probeQueue bounds the probe's capture queue: a record held there costs
// about twice what it counts against the bound, and a probe session is
// small.
const probeQueue = 8 << 20

// probeCapture is the probe's capture, the records as the capture
// writer hands them to its sink (numbered, redacted: the report is pasted
// in public): of the agent's stderr records it keeps the count and the
// last stderrKept (all the report shows), of the rest the first probeKept
// bytes, so that a flood from the agent (stderr above all: a log loop
// while it waits for a login) costs the probe no memory. Written by the
// capture writer's goroutine only, read once it is closed.
type probeCapture struct {
	records     []pipe.Record // but stderr ones
	kept        int           // their bytes
	stderr      []pipe.Record // the last stderrKept stderr records
	stderrLines int
	leftOut     int // records past probeKept
}

// record keeps one record, or counts it.
func (c *probeCapture) record(r pipe.Record) {
	if r.IsInput() && r.From == pipe.Agent && r.Stderr != nil {
		c.stderrLines++
		if len(c.stderr) == stderrKept {
			c.stderr = append(c.stderr[:0], c.stderr[1:]...)
		}
		c.stderr = append(c.stderr, r)
		return
	}
	size := len(r.Frame)
	if r.Text != nil {
		size += len(*r.Text)
	}
	if c.kept+size > probeKept {
		c.leftOut++
		return
	}
	c.kept += size
	c.records = append(c.records, r)
}

// all returns what was kept: the records, then the last stderr lines.
func (c *probeCapture) all() []pipe.Record {
	return append(slices.Clip(c.records), c.stderr...)
}

// analyze reads what the capture of the probe's session holds: the
// agent's frames, stderr and non-JSON lines, and what the proxy did with
// the methods outside ACP; then decides which modules act.
func (rep *probeReport) analyze(captured *probeCapture, p *prober) {
	rep.AuthMethods, rep.VendorMethods = []probeAuth{}, []probeMethod{}
	defer func() { rep.StderrLines = captured.stderrLines }()
	type input struct {
		method, kind string
	}
	unknown := rewrite.NewMethodFilter()
	pending := map[int64]input{} // vendor method frames by seq
	var order []int64
	handling := map[int64]string{}
	var agentInit []byte
	for _, rec := range captured.all() {
		switch {
		case rec.IsInput() && rec.From == pipe.Agent && rec.Stderr != nil:
			rep.StderrLines++
			rep.Stderr = append(rep.Stderr, *rec.Stderr)
			if len(rep.Stderr) > stderrKept {
				rep.Stderr = rep.Stderr[1:]
			}
		case rec.IsInput() && rec.From == pipe.Agent && rec.Text != nil:
			if len(rep.NonJSON) < 10 {
				rep.NonJSON = append(rep.NonJSON, *rec.Text)
			}
		case rec.IsInput() && rec.From == pipe.Agent && rec.Frame != nil:
			rep.AgentFrames++
			env := pipe.Peek(rec.Frame)
			if env.Kind == pipe.Response && agentInit == nil && bytes.Contains(rec.Frame, []byte(`"protocolVersion"`)) {
				agentInit = rec.Frame
			}
			if env.Kind != pipe.Request && env.Kind != pipe.Notification {
				continue
			}
			m := string(env.Method)
			if !strings.HasPrefix(m, "_") && !unknown.Unknown(m) {
				continue
			}
			pending[rec.Seq] = input{m, env.Kind.String()}
			order = append(order, rec.Seq)
		case rec.Op != "" && rec.Re != 0:
			if _, ok := pending[rec.Re]; !ok {
				continue
			}
			switch {
			case rec.Op == pipe.OpReply && rec.To == pipe.Agent:
				handling[rec.Re] = "answered by the proxy" + answerCode(rec.Frame)
			case rec.Op == pipe.OpDrop && handling[rec.Re] == "":
				handling[rec.Re] = "dropped by the proxy"
			case rec.Op == pipe.OpReplace:
				handling[rec.Re] = "forwarded, rewritten"
			}
		}
	}
	for _, seq := range order {
		in := pending[seq]
		h := handling[seq]
		if h == "" {
			h = "forwarded to the client"
			if strings.HasPrefix(in.method, "_") {
				h += " (an _-prefixed extension method)"
			}
		}
		rep.VendorMethods = append(rep.VendorMethods, probeMethod{Method: in.method, Kind: in.kind, Handling: h})
	}
	if rep.Initialize != nil {
		rep.readInitialize(agentInit, p)
	}
}

// answerCode names the error code of a reply the proxy made, if any.
func answerCode(frame []byte) string {
	var r struct {
		Error *struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(frame, &r) == nil && r.Error != nil {
		return fmt.Sprintf(" with %d", r.Error.Code)
	}
	return ""
}

// readInitialize reads the initialize result: who the agent is, what it
// offers, and which modules act on it.
func (rep *probeReport) readInitialize(agentInit []byte, p *prober) {
	var res struct {
		ProtocolVersion json.RawMessage `json:"protocolVersion"`
		AgentInfo       *probeAgent     `json:"agentInfo"`
		Caps            struct {
			Session struct {
				Subagents json.RawMessage `json:"subagents"`
			} `json:"sessionCapabilities"`
			Meta map[string]json.RawMessage `json:"_meta"`
		} `json:"agentCapabilities"`
		AuthMethods []probeAuth `json:"authMethods"`
	}
	if err := json.Unmarshal(rep.Initialize, &res); err != nil {
		return
	}
	rep.ProtocolVersion = res.ProtocolVersion
	rep.Agent = res.AgentInfo
	rep.NativeSubagentSessions = len(res.Caps.Session.Subagents) > 0 && string(res.Caps.Session.Subagents) != "null"
	rep.Advertised = res.Caps.Meta["acp-normalize"]
	if res.AuthMethods != nil {
		rep.AuthMethods = res.AuthMethods
	}
	name := ""
	if res.AgentInfo != nil {
		name = res.AgentInfo.Name
	}
	rep.Modules = moduleVerdicts(p.mods, name, p.vendor, innerModules(agentInit))
}

// innerModules lists the modules an acp-normalize in front of the agent
// advertised in the agent's own initialize result (nested proxies).
func innerModules(agentInit []byte) []string {
	var res struct {
		Result struct {
			Caps struct {
				Meta struct {
					Us struct {
						Modules []string `json:"modules"`
					} `json:"acp-normalize"`
				} `json:"_meta"`
			} `json:"agentCapabilities"`
		} `json:"result"`
	}
	if json.Unmarshal(agentInit, &res) != nil {
		return nil
	}
	return res.Result.Caps.Meta.Us.Modules
}

// moduleVerdicts says, for each module, whether it acts on an agent
// named agentName, from the module list alone: a module that waits for
// its agents' agentInfo.name (rule V1) acts on them or with --vendor; one
// that checks no name is on for any agent and acts on the frames it knows.
func moduleVerdicts(mods []rewrite.Module, agentName, vendor string, inner []string) []probeModule {
	out := make([]probeModule, 0, len(mods))
	for _, m := range mods {
		v := probeModule{Name: m.Name}
		gated := slices.Contains(m.Triggers, rewrite.AgentInfoTrigger)
		known := agentName != "" && slices.Contains(m.Agents, agentName)
		switch {
		case slices.Contains(inner, m.Name):
			v.State, v.Why = "off", "the agent is behind another acp-normalize that applies it"
		case gated && vendor == m.Name:
			v.State, v.Why = "acts", "--vendor "+m.Name+" (V1)"
		case gated && known:
			v.State, v.Why = "acts", fmt.Sprintf("agentInfo.name %q is its agent's (V1)", agentName)
		case gated:
			v.State, v.Why = "off", "acts only on agentInfo.name "+quoteAll(m.Agents, " or ")+", or with --vendor "+m.Name+" (V1)"
		case known:
			v.State, v.Why = "acts", fmt.Sprintf("agentInfo.name %q is its agent's; it checks no name and acts on its agent's frames from any agent", agentName)
		default:
			v.State, v.Why = "any-agent", "checks no agent name; acts on the frames it knows from any agent"
		}
		out = append(out, v)
	}
	return out
}

func quoteAll(names []string, sep string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, sep)
}

// readSession reads a session/new result.
func readSession(result json.RawMessage) *probeSession {
	var res struct {
		SessionID string `json:"sessionId"`
		Modes     *struct {
			Current   string `json:"currentModeId"`
			Available []struct {
				ID string `json:"id"`
			} `json:"availableModes"`
		} `json:"modes"`
		Models *struct {
			Current   string `json:"currentModelId"`
			Available []struct {
				ID string `json:"modelId"`
			} `json:"availableModels"`
		} `json:"models"`
	}
	s := &probeSession{}
	if err := json.Unmarshal(result, &res); err != nil {
		s.Error = "unreadable result: " + err.Error()
		return s
	}
	s.ID = res.SessionID
	if res.Modes != nil {
		s.CurrentMode = res.Modes.Current
		for _, m := range res.Modes.Available {
			s.Modes = append(s.Modes, m.ID)
		}
	}
	if res.Models != nil {
		s.CurrentModel = res.Models.Current
		for _, m := range res.Models.Available {
			s.Models = append(s.Models, m.ID)
		}
	}
	return s
}

// loginHint names the agent's auth methods, for the auth-required line.
func (rep *probeReport) loginHint() string {
	if len(rep.AuthMethods) == 0 {
		return " (it lists no auth methods)"
	}
	ids := make([]string, len(rep.AuthMethods))
	for i, a := range rep.AuthMethods {
		ids[i] = a.ID
	}
	return " (its auth methods: " + strings.Join(ids, ", ") + ")"
}

// writeText prints the report in one screen.
func (rep *probeReport) writeText(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	line := func(key, format string, args ...any) {
		// The values are the agent's words: escaped for the terminal.
		fmt.Fprintf(tw, "%s\t%s\n", key, terminal.Text(fmt.Sprintf(format, args...)))
	}
	agent := "(no agentInfo in the initialize result)"
	if a := rep.Agent; a != nil {
		agent = strings.TrimSpace(a.Name + " " + a.Version)
		if a.Title != "" && a.Title != a.Name {
			agent = a.Title + " (" + agent + ")"
		}
	}
	line("agent", "%s, answered initialize in %d ms", agent, rep.InitializeMS)
	line("protocol", "%s", orDash(string(rep.ProtocolVersion)))
	var acting, anyAgent, off []string
	for _, m := range rep.Modules {
		switch m.State {
		case "acts":
			acting = append(acting, m.Name+": "+m.Why)
		case "any-agent":
			anyAgent = append(anyAgent, m.Name)
		default:
			off = append(off, m.Name)
		}
	}
	key := "modules"
	if len(acting) == 0 {
		why := "no module knows this agent's agentInfo.name (V1)"
		if rep.Agent == nil || rep.Agent.Name == "" {
			why = "the agent sends no agentInfo.name: only modules that check no name act on it (V1)"
		}
		line(key, "%s", why)
		key = ""
	}
	for _, a := range acting {
		line(key, "%s", a)
		key = ""
	}
	if len(anyAgent) > 0 {
		line(key, "on for any agent, acting only on frames they know: %s", strings.Join(anyAgent, ", "))
		key = ""
	}
	if len(off) > 0 {
		line(key, "off for this agent: %s", strings.Join(off, ", "))
	}
	if rep.NativeSubagentSessions {
		line("subagents", "native subagent sessions advertised (sessionCapabilities.subagents): passed through to a client that declares clientCapabilities.subagents (S3)")
	} else {
		line("subagents", "no native subagent sessions advertised (sessionCapabilities.subagents); an agent may still announce them to a client that declares clientCapabilities.subagents")
	}
	auth := "no auth methods"
	if len(rep.AuthMethods) > 0 {
		var parts []string
		for _, a := range rep.AuthMethods {
			p := a.ID
			if a.Name != "" && a.Name != a.ID {
				p += fmt.Sprintf(" (%s)", a.Name)
			}
			if a.Type == "terminal" {
				p += fmt.Sprintf(" [a login in a terminal: AGENT %s]", strings.Join(a.Args, " "))
			}
			parts = append(parts, p)
		}
		auth = "methods " + strings.Join(parts, ", ")
	}
	switch {
	case rep.AuthRequired:
		auth += "; REQUIRED: session/new asked for a login"
	case rep.Session != nil && rep.Session.Error == "":
		auth += "; not required (session/new answered)"
	}
	line("auth", "%s", auth)
	if len(rep.VendorMethods) == 0 {
		line("vendor methods", "none during initialize and session/new")
	}
	key = "vendor methods"
	for _, m := range rep.VendorMethods {
		line(key, "%s (%s): %s", m.Method, m.Kind, m.Handling)
		key = ""
	}
	if s := rep.Session; s != nil {
		if s.Error != "" {
			line("session/new", "failed: %s", s.Error)
		} else {
			desc := fmt.Sprintf("answered in %d ms", s.MS)
			if len(s.Modes) > 0 {
				desc += fmt.Sprintf("; modes %s (current %s)", strings.Join(s.Modes, ", "), orDash(s.CurrentMode))
			}
			if len(s.Models) > 0 {
				desc += fmt.Sprintf("; %d models (current %s)", len(s.Models), orDash(s.CurrentModel))
			}
			line("session/new", "%s", desc)
		}
	}
	if e := rep.Exit; e != nil {
		how := describeExit(e.Code)
		if e.Code == 0 && e.GraceMS > 0 && e.AfterMS >= e.GraceMS {
			how = fmt.Sprintf("%s after SIGTERM (it did not exit within the %s grace after its stdin closed)", how, time.Duration(e.GraceMS)*time.Millisecond)
		}
		line("ended", "%s, %d ms after its stdin closed", how, e.AfterMS)
	}
	if rep.StderrLines > 0 {
		line("stderr", "%d lines from the agent (not shown; --json has the last %d)", rep.StderrLines, stderrKept)
	}
	if len(rep.NonJSON) > 0 {
		line("stdout", "%d non-JSON lines dropped (F2), the first: %s", len(rep.NonJSON), quoteLine(rep.NonJSON[0]))
	}
	_ = tw.Flush()
}

// describeExit words an exit code of the proxy's F5/F6 conventions.
func describeExit(code int) string {
	switch code {
	case 0:
		return "the agent exited 0"
	case 128 + 15:
		return "the agent was ended with SIGTERM (exit 143) after the grace"
	case 128 + 9:
		return "the agent was killed with SIGKILL (exit 137): it ignored SIGTERM"
	}
	return fmt.Sprintf("the agent exited %d", code)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

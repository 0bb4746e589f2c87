package check

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/acp-normalize/acp-normalize/internal/acpschema"
	"github.com/acp-normalize/acp-normalize/internal/rawjson"
	"github.com/acp-normalize/acp-normalize/internal/terminal"
	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/route"
)

// Checker validates every frame of replayed captures against the ACP schema
// of the negotiated protocol version (internal/acpschema: the stable
// schema, the unstable one only for the shapes only it has) and reports
// what the contract names as vendor breakage: methods that are neither
// ACP's nor '_'-prefixed (V7), the draft subagent dialect (S6), child
// session shapes sent to a client that did not opt in (S0), request ids a
// receiver would reject (a second open request with the same id, an
// answer to no open request), lines that are not JSON (F2) and frames that
// are not valid UTF-8.
//
// Each problem is attributed to the side that sent the frame: the client,
// the agent, or acp-normalize for the frames the proxy wrote in the replay
// (rule P3: those must be clean). Problems are grouped by direction,
// method and JSON path, with a count, the first example and how many of
// the frames reached the other side as they were sent.
type Checker struct {
	w        io.Writer
	json     bool
	run      *checkRun
	problems int
	// levels counts the problem groups found so far by Level.
	levels map[Level]int
	empty  int
	// schemas are loaded once, for every capture.
	schemas map[int]*acpschema.Schema
	// mods cite the rule of the vendor methods they handle.
	mods []rewrite.Module
}

// NewCheck returns a Check writing a report per capture to w: text, or
// with jsonOut one JSON object per capture and line. A finding about a
// vendor method one of mods handles cites that module's rule
// (Module.MethodRules); any other, V7.
func New(w io.Writer, jsonOut bool, mods ...rewrite.Module) *Checker {
	return &Checker{w: w, json: jsonOut, schemas: map[int]*acpschema.Schema{}, mods: mods, levels: map[Level]int{}}
}

// Problems is the number of problem groups found so far (0: clean).
func (c *Checker) Problems() int { return c.problems }

// AtLeast is the number of problem groups found so far at level l or
// above: what `check --fail-on l` fails on.
func (c *Checker) AtLeast(l Level) int {
	n := 0
	for level, count := range c.levels {
		if level >= l {
			n += count
		}
	}
	return n
}

// Level is how bad a finding is for the session, lowest first.
type Level int

const (
	// Repaired: the receiver never gets the problem; acp-normalize
	// answers, drops or replaces every frame that has it.
	Repaired Level = iota + 1
	// Broken: the receiver gets the problem (and may reject the frame)
	// in at least one frame: acp-normalize does not repair it, or wrote
	// it itself (P3).
	Broken
)

// String is the level's name, as `--fail-on` takes it and --json writes
// it.
func (l Level) String() string {
	switch l {
	case Repaired:
		return "repaired"
	case Broken:
		return "broken"
	}
	return fmt.Sprintf("Level(%d)", int(l))
}

// MarshalText writes the level's name.
func (l Level) MarshalText() ([]byte, error) { return []byte(l.String()), nil }

// UnmarshalText reads a level's name, for readers of --json reports.
func (l *Level) UnmarshalText(b []byte) error {
	v, err := ParseLevel(string(b))
	if err != nil {
		return err
	}
	*l = v
	return nil
}

// ParseLevel reads a level's name.
func ParseLevel(name string) (Level, error) {
	for _, l := range []Level{Repaired, Broken} {
		if l.String() == name {
			return l, nil
		}
	}
	return 0, fmt.Errorf("unknown level %q: repaired or broken", name)
}

// level is the finding's Level, once its frames are counted.
func (f *finding) level() Level {
	if f.Side == proxySide || f.Reached > 0 {
		return Broken
	}
	return Repaired
}

// Empty is the number of captures so far in which no frame could be
// checked (an empty file, stdin from a command that failed): not clean.
func (c *Checker) Empty() int { return c.empty }

// noFrames reports whether the capture gave no frame to check.
func (r *checkRun) noFrames() bool { return r.frames["client"]+r.frames["agent"] == 0 }

// proxySide names the proxy as the sender of the frames it wrote.
const proxySide = "acp-normalize"

// finding is one group of problems.
type finding struct {
	// Side sent the frames, To received them.
	Side string `json:"side"`
	To   string `json:"to"`
	// Method is the frame's method (for a response, its request's);
	// Update the sessionUpdate kind of a session/update; Kind "request",
	// "notification", "response" or "line".
	Method string `json:"method,omitempty"`
	Update string `json:"update,omitempty"`
	Kind   string `json:"kind"`
	// Check is what found the problem: "schema" (the ACP schema),
	// "method" (no ACP method), "draft" (the draft subagent dialect),
	// "capability" (a shape the client did not opt in to), "id",
	// "session" (a session the client does not know), "tool-call" (an
	// update of a call never announced) or "framing" (not one JSON-RPC
	// message).
	Check string `json:"check"`
	// Path is the JSON pointer of the problem in the frame ("" for the
	// frame as a whole), Message what is wrong, Rule the contract rule
	// that names it, if one does.
	Path    string `json:"path"`
	Message string `json:"message"`
	Rule    string `json:"rule,omitempty"`
	Count   int    `json:"count"`
	// FirstLine is the capture line of the first frame; Example that
	// frame (cut at exampleLimit bytes, ExampleCut then set).
	FirstLine  int    `json:"firstLine"`
	Example    string `json:"example"`
	ExampleCut bool   `json:"exampleCut,omitempty"`
	// Reached counts the frames whose problem reached the receiver: the
	// frame as sent, or a replacement by the proxy that kept the problem
	// (the proxy answered, dropped or repaired the others).
	Reached int `json:"reached"`
	// Level is Broken when any frame's problem reached the receiver
	// (every frame acp-normalize wrote reaches it), else Repaired.
	Level Level `json:"level"`
}

// exampleLimit is how many bytes of an example frame a report carries.
const exampleLimit = 2000

type findingKey struct{ check, side, method, update, kind, path, message string }

// checkRun is the check of one capture.
type checkRun struct {
	name          string
	mods          []rewrite.Module // whose MethodRules the findings cite
	schemas       map[int]*acpschema.Schema
	version       int
	versionSource string
	client, agent [2]string // name, version
	subagents     bool      // the client opted in (S0)
	// requests are the methods of requests by (the side they came from,
	// the id's value); open the ones not answered yet.
	requests map[idRef]string
	open     map[idRef]bool
	// proxyAnswered are requests the proxy answered itself (C1, V7): in
	// a recording made without the proxy the client answered them too,
	// which is no fault of the client's.
	proxyAnswered map[idRef]bool
	frames        map[string]int
	// unread counts the capture's lines that could not be read: they are
	// not checked, so the capture is not called clean.
	unread     int
	unreadRest bool // the rest of the file
	groups     map[findingKey]*finding
	pending    []problem
	err        error
	// initialized is set once an initialize request is seen: the capture
	// starts at the start, so every session and tool call the client
	// knows is in it (sessions, toolCalls).
	initialized bool
	sessions    map[string]bool
	own         map[string]bool // of those, the client's: created (a session/new answer) or loaded
	toolCalls   map[[2]string]bool
}

type idRef struct {
	from string
	id   string
}

// Begin implements Renderer.
func (c *Checker) Begin(name string) error {
	c.run = &checkRun{name: name, mods: c.mods, schemas: c.schemas, version: 1, versionSource: "assumed: no initialize",
		requests: map[idRef]string{}, open: map[idRef]bool{}, proxyAnswered: map[idRef]bool{},
		frames: map[string]int{}, groups: map[findingKey]*finding{}, sessions: map[string]bool{}, own: map[string]bool{}, toolCalls: map[[2]string]bool{}}
	return nil
}

// Step implements Renderer.
func (c *Checker) Step(s *route.Step) error {
	r := c.run
	if r == nil {
		return nil
	}
	if s.Kind == route.StepEvent && s.Text == "connection" {
		r.newConnection() // a trace's next connection: ids and sessions start afresh
	}
	var in []problem
	if s.Kind == route.StepFrame {
		r.input(s)
		in = r.take()
	}
	// A problem of the input reaches the receiver with the input as
	// read, or in the proxy's replacement when that keeps it (the
	// sender's, not the proxy's). Anything else in a frame the proxy
	// wrote is the proxy's.
	reached := make([]bool, len(in))
	asRead := delivered(s)
	for _, o := range s.Outs {
		if o.Op == "" || o.Frame == nil {
			continue
		}
		r.output(s, o)
		for _, p := range r.take() {
			kept := false
			for i, q := range in {
				if o.Op == pipe.OpReplace && sameProblem(p.key, q.key) {
					reached[i], kept = true, true
				}
			}
			if !kept {
				r.count(p, true)
			}
		}
	}
	for i, p := range in {
		r.count(p, asRead || reached[i])
	}
	return r.err
}

// Unreadable implements [Unreadable].
func (c *Checker) Unreadable(line int) {
	switch {
	case c.run == nil:
	case line == 0:
		c.run.unreadRest = true
	default:
		c.run.unread++
	}
}

// End implements Renderer: it writes the capture's report.
func (c *Checker) End() error {
	r := c.run
	if r == nil {
		return nil
	}
	c.run = nil
	fs := r.sorted()
	c.problems += len(fs)
	for _, f := range fs {
		f.Level = f.level()
		c.levels[f.Level]++
	}
	if r.noFrames() && r.unread == 0 && !r.unreadRest {
		c.empty++
	}
	if c.json {
		return c.writeJSON(r, fs)
	}
	return c.writeText(r, fs)
}

// newConnection forgets what one connection of a trace set up.
func (r *checkRun) newConnection() {
	r.requests, r.open, r.proxyAnswered = map[idRef]string{}, map[idRef]bool{}, map[idRef]bool{}
	r.sessions, r.own, r.toolCalls, r.initialized = map[string]bool{}, map[string]bool{}, map[[2]string]bool{}, false
}

// schema returns the schema of the negotiated version (v1 when that
// version has none here; the header says so).
func (r *checkRun) schema() *acpschema.Schema {
	v := r.version
	if s, ok := r.schemas[v]; ok {
		return s
	}
	s, err := acpschema.Load(v)
	if err != nil {
		if s, err = acpschema.Load(1); err != nil {
			r.err = err
			return nil
		}
		r.versionSource += fmt.Sprintf("; no schema for version %d: checked as v1", v)
	}
	r.schemas[v] = s
	return s
}

// input checks a frame one side sent.
func (r *checkRun) input(s *route.Step) {
	side, to := s.From.String(), s.From.Other().String()
	r.frames[side]++
	line := s.Line
	if s.NonJSON {
		r.add(findingKey{check: "framing", side: side, kind: "line", message: "a line that is not JSON on the protocol stream"}, "F2", line, s.In, to)
		return
	}
	env := pipe.Peek(s.In)
	method := ""
	switch env.Kind {
	case pipe.Request, pipe.Notification:
		method = string(env.Method)
		r.observeInitialize(s.From, method, s.In)
	case pipe.Response:
		method = r.requests[idRef{to, pipe.IDKey(string(env.ID))}]
		if method == "initialize" && s.From == pipe.Agent {
			r.observeInitialize(s.From, "", s.In)
		}
	}
	r.validate(side, to, method, env, s.In, line)
	r.idCheck(side, to, env, method, s.In, line)
	if side == "agent" {
		r.capability(side, method, s.In, line)
	}
	r.known(side, env, method, s.In, line)
}

// known finds frames toward the client about a session it never created
// and was never told about, and updates of a tool call its session never
// announced: a client has nothing to put them on. It also notes the
// sessions and tool calls that come into being.
func (r *checkRun) known(side string, env pipe.Envelope, method string, frame []byte, line int) {
	if method == "initialize" && env.Kind == pipe.Request {
		r.initialized = true
	}
	switch {
	case env.Kind == pipe.Response:
		if sid, ok := rawjson.LookupString(frame, "result", "sessionId"); ok {
			r.sessions[sid], r.own[sid] = true, r.own[sid] || side != "client"
		}
		return
	case side == "client":
		if sid, ok := rawjson.LookupString(frame, "params", "sessionId"); ok && method != "session/new" {
			r.sessions[sid] = true // session/load, resume: the client names it
			r.own[sid] = r.own[sid] || method == "session/load" || method == "session/resume"
		}
		return
	}
	sid, ok := rawjson.LookupString(frame, "params", "sessionId")
	if !ok {
		return
	}
	update, _ := rawjson.LookupString(frame, "params", "update", "sessionUpdate")
	switch update {
	case "subagent_update":
		if c, ok := rawjson.LookupString(frame, "params", "update", "sessionId"); ok {
			r.sessions[c] = true
			if r.own[c] || c == sid {
				r.add(findingKey{check: "session", side: side, method: method, update: update, kind: envKind(env), path: "/params/update/sessionId",
					message: "the client's own session announced as a child (of itself or another): a client may hide it or file it under another"}, "S7", line, frame, "client")
			}
		}
	case "subagent_spawned":
		if c, ok := rawjson.LookupString(frame, "params", "update", "subagentSessionId"); ok {
			r.sessions[c] = true
		}
	}
	if !r.initialized {
		return
	}
	kind := envKind(env)
	if !r.sessions[sid] {
		r.add(findingKey{check: "session", side: side, method: method, update: update, kind: kind, path: "/params/sessionId",
			message: "a session the client never created and was not told about"}, "", line, frame, "client")
	}
	// In v2 every update is an upsert: a first tool_call_update is fine.
	if r.version == 1 && (update == "tool_call" || update == "tool_call_update") {
		tc, _ := rawjson.LookupString(frame, "params", "update", "toolCallId")
		k := [2]string{sid, tc}
		if update == "tool_call" {
			r.toolCalls[k] = true
		} else if !r.toolCalls[k] {
			r.add(findingKey{check: "tool-call", side: side, method: method, update: update, kind: kind, path: "/params/update/toolCallId",
				message: "an update of a tool call this session never announced with tool_call"}, "", line, frame, "client")
		}
	}
}

// output checks a frame the proxy wrote (rule P3).
func (r *checkRun) output(s *route.Step, o route.Out) {
	to := o.To.String()
	r.frames[proxySide]++
	env := pipe.Peek(o.Frame)
	method := ""
	switch env.Kind {
	case pipe.Request, pipe.Notification:
		method = string(env.Method)
		if env.Kind == pipe.Request {
			// The receiver answers it as a request of the other side.
			k := idRef{o.To.Other().String(), pipe.IDKey(string(env.ID))}
			r.requests[k], r.open[k] = method, true
		}
	case pipe.Response:
		k := idRef{to, pipe.IDKey(string(env.ID))}
		method = r.requests[k]
		if r.open[k] {
			delete(r.open, k)
			r.proxyAnswered[k] = true
		}
	}
	r.validate(proxySide, to, method, env, o.Frame, s.Line)
	if to == "client" {
		r.capability(proxySide, method, o.Frame, s.Line)
		r.known(proxySide, env, method, o.Frame, s.Line)
	}
}

// validate checks a frame against the schema; from is the side it was
// sent by ("acp-normalize" for the proxy, which speaks for the other end
// toward to).
func (r *checkRun) validate(side, to, method string, env pipe.Envelope, frame []byte, line int) {
	kind := envKind(env)
	sender := acpschema.FromAgent
	if to == "agent" {
		sender = acpschema.FromClient
	}
	if env.Kind == pipe.Batch {
		r.add(findingKey{check: "framing", side: side, kind: kind, message: "a JSON-RPC batch: ACP sends one message per line"}, "", line, frame, to)
		return
	}
	sch := r.schema()
	if sch == nil {
		return
	}
	update := ""
	if method == "session/update" {
		update, _ = rawjson.LookupString(frame, "params", "update", "sessionUpdate")
	}
	if !utf8.Valid(frame) {
		// Passed on byte for byte: the receiver's parser (serde, as
		// Zed's) rejects the whole frame.
		r.add(findingKey{check: "framing", side: side, method: method, update: update, kind: kind,
			message: "not valid UTF-8: JSON text must be UTF-8; strict parsers (serde, Zed's) reject the frame, others alter the bytes"}, "", line, frame, to)
	}
	if method == "session/update" && (update == "subagent_spawned" || update == "subagent_state_update") {
		r.add(findingKey{check: "draft", side: side, method: method, update: update, kind: kind, path: "/params/update/sessionUpdate",
			message: "the draft subagent dialect: no ACP sessionUpdate; the standard is subagent_update"}, "S6", line, frame, to)
		return
	}
	err := sch.Validate(sender, method, frame)
	if err == nil {
		return
	}
	var se *acpschema.Error
	switch {
	case errors.Is(err, acpschema.ErrUnknownMethod):
		if strings.HasPrefix(method, "_") {
			return // an extension method: ACP allows those
		}
		rule := ""
		if to == "client" {
			rule = r.vendorMethodRule(method)
		}
		r.add(findingKey{check: "method", side: side, method: method, kind: kind,
			message: "not a method of the ACP schema, and not \"_\"-prefixed (an extension method)"}, rule, line, frame, to)
	case errors.As(err, &se) && len(se.Violations) > 0:
		for _, v := range se.Violations {
			r.add(findingKey{check: "schema", side: side, method: method, update: update, kind: kind, path: v.Path, message: v.Message}, "", line, frame, to)
		}
	default:
		r.add(findingKey{check: "schema", side: side, method: method, update: update, kind: kind, message: err.Error()}, "", line, frame, to)
	}
}

// vendorMethodRule names the contract rule for an agent-to-client method
// outside ACP: the rule the module that handles it cites
// (Module.MethodRules), else V7.
func (r *checkRun) vendorMethodRule(method string) string {
	for _, m := range r.mods {
		if rule, ok := m.RuleOf(method); ok {
			return rule
		}
	}
	return "V7"
}

// idCheck finds request ids the receiver would reject: a request whose
// id an open request from the same side already has (the answers could
// not be told apart), an answer to no open request.
func (r *checkRun) idCheck(side, to string, env pipe.Envelope, method string, frame []byte, line int) {
	switch env.Kind {
	case pipe.Request:
		k := idRef{side, pipe.IDKey(string(env.ID))}
		if r.open[k] {
			r.add(findingKey{check: "id", side: side, method: method, kind: pipe.Request.String(), path: "/id",
				message: "the id of a request of this side that is still open: the answers cannot be told apart"}, "", line, frame, to)
		}
		r.requests[k], r.open[k] = method, true
	case pipe.Response:
		k := idRef{to, pipe.IDKey(string(env.ID))}
		switch {
		case r.open[k]:
			delete(r.open, k)
		case r.proxyAnswered[k]:
			delete(r.proxyAnswered, k)
		case strings.HasPrefix(k.id, `"`+rewrite.ProxyIDPrefix):
			// An answer to a request the recording's proxy made (C12)
			// that this replay, with other modules, did not make.
		default:
			r.add(findingKey{check: "id", side: side, method: method, kind: pipe.Response.String(), path: "/id",
				message: "answers no open request of the other side (the receiver drops or rejects it)"}, "", line, frame, to)
		}
	}
}

// capability finds the child session shapes an agent (or the proxy) may
// send only to a client that declared clientCapabilities.subagents (S0).
func (r *checkRun) capability(side, method string, frame []byte, line int) {
	// In v2 subagent sessions are baseline: no capability to declare.
	if r.subagents || r.version != 1 || method != "session/update" {
		return
	}
	update, _ := rawjson.LookupString(frame, "params", "update", "sessionUpdate")
	switch update {
	case "subagent_update", "session_message", "session_message_chunk":
		r.add(findingKey{check: "capability", side: side, method: method, update: update, kind: pipe.Notification.String(), path: "/params/update/sessionUpdate",
			message: "a subagent session shape sent to a client that did not declare clientCapabilities.subagents"}, "S0", line, frame, "client")
	}
}

// observeInitialize reads the protocol version, the names and the
// subagents opt-in from the initialize exchange.
func (r *checkRun) observeInitialize(from pipe.Side, method string, frame []byte) {
	switch {
	case from == pipe.Client && method == "initialize":
		if r.client[0] == "" { // a trace's later connections keep the first names
			r.client[0], r.client[1] = rewrite.PeerInfo(frame, "params", "clientInfo")
		}
		if v, err := strconv.Atoi(rawjson.ScalarText(frame, "params", "protocolVersion")); err == nil {
			r.version, r.versionSource = v, "the client's initialize request"
		}
		caps, _ := rawjson.Lookup(frame, "params", "clientCapabilities")
		sub, ok := rawjson.Lookup(caps, "subagents")
		metaSub, _ := rawjson.Lookup(caps, "_meta", "subagents")
		r.subagents = ok && rawjson.FirstByte(sub) == '{' || rawjson.Truthy(metaSub)
	case from == pipe.Agent && method == "":
		if r.agent[0] == "" {
			r.agent[0], r.agent[1] = rewrite.PeerInfo(frame, "result", "agentInfo")
		}
		if v, err := strconv.Atoi(rawjson.ScalarText(frame, "result", "protocolVersion")); err == nil {
			r.version, r.versionSource = v, "the initialize result"
		}
	}
}

// add notes one problem of the frame being checked; flush counts them.
func (r *checkRun) add(k findingKey, rule string, line int, frame []byte, to string) {
	r.pending = append(r.pending, problem{key: k, rule: rule, line: line, frame: frame, to: to})
}

// problem is one problem of one frame, before it is counted.
type problem struct {
	key   findingKey
	rule  string
	line  int
	frame []byte
	to    string
}

// count adds p to its group; reached says the problem reached the
// receiver (the frame as sent, or a replacement that kept it).
func (r *checkRun) count(p problem, reached bool) {
	f := r.groups[p.key]
	if f == nil {
		k := p.key
		f = &finding{Check: k.check, Side: k.side, To: p.to, Method: k.method, Update: k.update, Kind: k.kind, Path: k.path, Message: k.message,
			Rule: p.rule, FirstLine: p.line}
		ex := p.frame
		if len(ex) > exampleLimit {
			ex, f.ExampleCut = ex[:exampleLimit], true
		}
		f.Example = strings.ToValidUTF8(string(ex), "\uFFFD")
		r.groups[p.key] = f
	}
	f.Count++
	if reached {
		f.Reached++
	}
}

// take returns the problems noted since the last take.
func (r *checkRun) take() []problem {
	ps := r.pending
	r.pending = nil
	return ps
}

// sameProblem reports whether a and b are one problem whoever sent them.
func sameProblem(a, b findingKey) bool {
	a.side, b.side = "", ""
	return a == b
}

// sorted returns the findings by sender (agent, client, acp-normalize),
// method, update and path.
func (r *checkRun) sorted() []*finding {
	fs := make([]*finding, 0, len(r.groups))
	for _, f := range r.groups {
		fs = append(fs, f)
	}
	rank := map[string]int{"agent": 0, "client": 1, proxySide: 2}
	sort.Slice(fs, func(i, j int) bool {
		a, b := fs[i], fs[j]
		if rank[a.Side] != rank[b.Side] {
			return rank[a.Side] < rank[b.Side]
		}
		if a.Method != b.Method {
			return a.Method < b.Method
		}
		if a.Update != b.Update {
			return a.Update < b.Update
		}
		if a.Path != b.Path {
			return a.Path < b.Path
		}
		return a.Message < b.Message
	})
	return fs
}

// delivered reports whether the step's input reached the other side as
// read.
func delivered(s *route.Step) bool {
	for _, o := range s.Outs {
		if o.Re != 0 && o.Op == "" {
			return true
		}
	}
	return false
}

func envKind(env pipe.Envelope) string {
	if env.Kind == pipe.NotJSON || env.Kind == pipe.Invalid {
		return "line" // a finding is about the line, whatever it failed to be
	}
	return env.Kind.String()
}

func (c *Checker) writeText(r *checkRun, fs []*finding) error {
	var b strings.Builder
	b.WriteString(terminal.Text(r.name) + "\n")
	var who []string
	if r.client[0] != "" {
		who = append(who, "client "+strings.TrimSpace(r.client[0]+" "+r.client[1]))
	}
	if r.agent[0] != "" {
		who = append(who, "agent "+strings.TrimSpace(r.agent[0]+" "+r.agent[1]))
	}
	who = append(who, fmt.Sprintf("ACP v%d (%s)", r.version, r.versionSource))
	b.WriteString("  " + terminal.Line(strings.Join(who, ", "), 300) + "\n")
	fmt.Fprintf(&b, "  %d %s from the client, %d from the agent, %d written by acp-normalize in the replay\n",
		r.frames["client"], plural(r.frames["client"], "frame"), r.frames["agent"], r.frames[proxySide])
	for _, side := range []string{"agent", "client", proxySide} {
		var mine []*finding
		to := map[string]string{"agent": "client", "client": "agent", proxySide: "client and agent"}[side]
		for _, f := range fs {
			if f.Side == side {
				mine = append(mine, f)
			}
		}
		if len(mine) == 0 {
			if r.frames[side] > 0 {
				fmt.Fprintf(&b, "  %s → %s: clean\n", side, to)
			}
			continue
		}
		fmt.Fprintf(&b, "  %s → %s: %d %s\n", side, to, len(mine), plural(len(mine), "problem"))
		for _, f := range mine {
			head := f.Method
			if head == "" {
				head = "(" + f.Kind + ")"
			} else {
				head += " " + f.Kind
			}
			if f.Update != "" {
				head += " " + f.Update
			}
			where := f.Message
			if f.Path != "" {
				where = f.Path + ": " + f.Message
			}
			if f.Rule != "" {
				where += " (rule " + f.Rule + ")"
			}
			fmt.Fprintf(&b, "    ✗ %s  %s\n", terminal.Line(head, 120), terminal.Line(where, 300))
			frames := fmt.Sprintf("%d %s, first at line %d", f.Count, plural(f.Count, "frame"), f.FirstLine)
			if side != proxySide {
				switch {
				case f.Reached == f.Count:
					frames += "; the " + f.To + " gets the problem"
				case f.Reached == 0:
					frames += "; acp-normalize repairs it: it answers, drops or replaces every one"
				default:
					frames += fmt.Sprintf("; the %s gets the problem in %d", f.To, f.Reached)
				}
			}
			b.WriteString("        " + frames + "\n")
			b.WriteString("        " + terminal.Line(f.Example, 200) + "\n")
		}
	}
	if r.unread > 0 {
		fmt.Fprintf(&b, "  %d %s could not be read (reported on stderr) and %s not checked\n",
			r.unread, plural(r.unread, "line"), map[bool]string{true: "was", false: "were"}[r.unread == 1])
	}
	if r.unreadRest {
		b.WriteString("  the rest of the file could not be read (reported on stderr) and was not checked\n")
	}
	switch {
	case len(fs) == 0 && (r.unread > 0 || r.unreadRest):
		b.WriteString("  no problems in the lines read\n")
	case len(fs) == 0 && r.noFrames():
		b.WriteString("  no frames in it: nothing was checked\n")
	case len(fs) == 0:
		b.WriteString("  no problems\n")
	}
	b.WriteString("\n")
	_, err := io.WriteString(c.w, b.String())
	return err
}

// checkReport is the JSON form of one capture's check.
type checkReport struct {
	File            string         `json:"file"`
	ProtocolVersion int            `json:"protocolVersion"`
	VersionFrom     string         `json:"versionFrom"`
	Client          *checkPeer     `json:"client,omitempty"`
	Agent           *checkPeer     `json:"agent,omitempty"`
	Frames          map[string]int `json:"frames"`
	Problems        int            `json:"problems"`
	UnreadLines     int            `json:"unreadLines,omitempty"`
	UnreadRest      bool           `json:"unreadRest,omitempty"`
	NoFrames        bool           `json:"noFrames,omitempty"`
	Findings        []*finding     `json:"findings"`
}

type checkPeer struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
}

func (c *Checker) writeJSON(r *checkRun, fs []*finding) error {
	rep := checkReport{File: r.name, ProtocolVersion: r.version, VersionFrom: r.versionSource,
		Frames:   map[string]int{"client": r.frames["client"], "agent": r.frames["agent"], proxySide: r.frames[proxySide]},
		Problems: len(fs), UnreadLines: r.unread, UnreadRest: r.unreadRest, NoFrames: r.noFrames(), Findings: fs}
	if r.client[0] != "" {
		rep.Client = &checkPeer{r.client[0], r.client[1]}
	}
	if r.agent[0] != "" {
		rep.Agent = &checkPeer{r.agent[0], r.agent[1]}
	}
	b, err := json.Marshal(rep)
	if err != nil {
		return err
	}
	_, err = c.w.Write(append(terminal.JSON(b), '\n')) // examples are vendor frames
	return err
}

func plural(n int, noun string) string {
	if n == 1 {
		return noun
	}
	return noun + "s"
}

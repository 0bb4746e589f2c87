package timeline

import (
	"encoding/json"
	"strings"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
	"github.com/acp-normalize/acp-normalize/internal/terminal"
	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite/meta"
	"github.com/acp-normalize/acp-normalize/route"
)

// The subagent tree of the viewer: the sessions of a connection, the
// subagent launch calls on them (a tool call that carries the rule-M
// snapshot) and the child sessions (standard subagent_update, or the draft
// subagent_spawned), nested as they were launched. It is built from what
// the proxy delivered (the normalized stream: the snapshot is there), and
// from the input where nothing was delivered.

// Node kinds.
const (
	nodeSession = "session"
	nodeLaunch  = "launch"
	nodeChild   = "child"
)

// viewNode is one node of the tree.
type viewNode struct {
	ID     int    `json:"id"`
	Kind   string `json:"k"`
	Parent int    `json:"p"` // -1 for a root
	// Session is the node's own session id (session, child) or the
	// session its tool call runs on (launch); ToolCall a launch's id.
	Session  string `json:"s,omitempty"`
	ToolCall string `json:"tc,omitempty"`
	Title    string `json:"title,omitempty"`
	// Description is a launch's task (or a child's description).
	Description  string `json:"desc,omitempty"`
	Model        string `json:"model,omitempty"`
	Vendor       string `json:"vendor,omitempty"`
	SubagentType string `json:"type,omitempty"`
	Background   *bool  `json:"bg,omitempty"`
	// Child is the child session a launch call is linked to.
	Child string `json:"child,omitempty"`
	// Draft marks a child announced in the draft dialect (rule S6).
	Draft bool `json:"draft,omitempty"`
	// Status is the last status; States its changes over time.
	Status string      `json:"status,omitempty"`
	States []viewState `json:"st,omitempty"`
	// DurationMs is the vendor's duration when it gave one (Measured
	// set), else the time from the node's first frame to its final
	// status, or to its last frame when it never got one (Open).
	DurationMs *float64 `json:"dur,omitempty"`
	Measured   bool     `json:"measured,omitempty"`
	Open       bool     `json:"open,omitempty"`
	// First and Last are the rows of the node's first and last frame,
	// Frames how many rows belong to it (descendants not counted).
	First  int `json:"r0"`
	Last   int `json:"r1"`
	Frames int `json:"nf"`

	// implicit marks a session first seen on a frame, not created by a
	// session/new or session/load: a later subagent_update may make it
	// a child.
	implicit bool
	firstT   *float64
	lastT    *float64
	endT     *float64
	vendorMs *float64
}

// viewState is a status a node reached, the row where and when.
type viewState struct {
	T   *float64 `json:"t,omitempty"`
	Row int      `json:"r"`
	V   string   `json:"v"`
}

type launchKey struct{ session, toolCall string }

type reqKey struct {
	to pipe.Side
	id string
}

type treeBuilder struct {
	nodes    []*viewNode
	sessions map[string]int    // session id -> session or child node
	launches map[launchKey]int // (session, toolCallId) -> launch node
	byTool   map[string]int    // toolCallId -> its latest launch node
	children map[string]int    // child session id -> the launch linked to it
	requests map[reqKey]int    // open request -> the node it is about
}

func newTreeBuilder() *treeBuilder {
	return &treeBuilder{sessions: map[string]int{}, launches: map[launchKey]int{}, byTool: map[string]int{},
		children: map[string]int{}, requests: map[reqKey]int{}}
}

// snapshotFields are the members of the rule-M snapshot the tree shows.
type snapshotFields struct {
	Vendor         string          `json:"vendor"`
	Description    string          `json:"description"`
	Prompt         string          `json:"prompt"`
	SubagentType   string          `json:"subagentType"`
	Model          string          `json:"model"`
	ResolvedModel  string          `json:"resolvedModel"`
	Background     *bool           `json:"background"`
	Status         string          `json:"status"`
	DurationMs     json.RawMessage `json:"durationMs"`
	ChildSessionID string          `json:"childSessionId"`
}

// step adds what step s (row i, at t) says to the tree and returns the
// node the row belongs to, or -1.
func (tb *treeBuilder) step(i int, t *float64, s *route.Step) int {
	if s.Kind != route.StepFrame || s.NonJSON {
		return -1
	}
	node := -1
	analyzed := false
	for _, o := range s.Outs {
		if !pipe.IsJSON(o.Frame) {
			continue
		}
		analyzed = true
		if n := tb.frame(i, t, o.To, o.Frame); node < 0 {
			node = n
		}
	}
	if !analyzed {
		node = tb.frame(i, t, s.From.Other(), s.In)
	}
	if node >= 0 {
		tb.touch(node, i, t)
	}
	return node
}

// touch notes that row i (at t) belongs to node n.
func (tb *treeBuilder) touch(n, i int, t *float64) {
	nd := tb.nodes[n]
	if nd.Frames == 0 {
		nd.First, nd.firstT = i, t
	}
	nd.Frames++
	nd.Last = i
	if t != nil {
		nd.lastT = t
		if nd.firstT == nil {
			nd.firstT = t
		}
	}
}

// frame adds one frame travelling to side to and returns its node.
func (tb *treeBuilder) frame(i int, t *float64, to pipe.Side, f []byte) int {
	env := pipe.Peek(f)
	switch env.Kind {
	case pipe.Response:
		k := reqKey{to: to, id: pipe.IDKey(string(env.ID))}
		n, open := tb.requests[k]
		delete(tb.requests, k)
		if sid, ok := rawjson.LookupString(f, "result", "sessionId"); ok && sid != "" {
			return tb.session(sid, false)
		}
		if open {
			return n
		}
		return -1
	case pipe.Request, pipe.Notification:
	default:
		return -1
	}
	params, _ := rawjson.Lookup(f, "params")
	sid, _ := rawjson.LookupString(params, "sessionId")
	method := string(env.Method)
	n := -1
	switch {
	case method == "session/update":
		n = tb.update(i, t, sid, params)
	case method == "session/new":
		// The session is known from the result.
	case sid != "":
		n = tb.session(sid, method != "session/load" && method != "session/resume")
		if tc, ok := rawjson.LookupString(params, "toolCall", "toolCallId"); ok {
			if l, ok := tb.launches[launchKey{sid, tc}]; ok {
				n = l
			}
		}
		if p := parentOf(params, "toolCall"); p != "" {
			if l, ok := tb.byTool[p]; ok {
				n = l
			}
		}
		if c, ok := rawjson.LookupString(params, "toolCall", "_meta", meta.Key, "childSessionId"); ok {
			n = tb.childNode(c, sid)
		}
	}
	if env.Kind == pipe.Request && n >= 0 {
		tb.requests[reqKey{to: to.Other(), id: pipe.IDKey(string(env.ID))}] = n
	}
	return n
}

// parentOf is the launch call's toolCallId on a frame a subagent produced:
// ours (rule M), else the agent's own in its _meta (a parentToolCallId or
// parentToolUseId member of _meta or of one of its objects, as Claude's
// claudeCode.parentToolUseId).
func parentOf(obj []byte, path ...string) string {
	m, ok := rawjson.Lookup(obj, append(path, "_meta")...)
	if !ok {
		return ""
	}
	if p, ok := rawjson.LookupString(m, meta.Key, meta.ParentMember); ok {
		return p
	}
	if p, ok := vendorMetaString(m, "parentToolCallId"); ok {
		return p
	}
	p, _ := vendorMetaString(m, "parentToolUseId")
	return p
}

// vendorMetaString returns the string member key of a _meta object m, or
// of the first of its object members that has one (the agent's own
// namespace, such as Cursor's _meta.cursor); ours is left out.
func vendorMetaString(m []byte, key string) (string, bool) {
	if s, ok := rawjson.LookupString(m, key); ok {
		return s, true
	}
	var found string
	var ok bool
	_ = rawjson.Members(m, func(mem rawjson.Member) bool {
		if string(mem.Key) == meta.Key || rawjson.FirstByte(mem.Value) != '{' {
			return true
		}
		found, ok = rawjson.LookupString(mem.Value, key)
		return !ok
	})
	return found, ok
}

// vendorMeta is vendorMetaString on the _meta of u.
func vendorMeta(u []byte, key string) (string, bool) {
	m, ok := rawjson.Lookup(u, "_meta")
	if !ok {
		return "", false
	}
	return vendorMetaString(m, key)
}

// session returns the node of session id, creating a root session node
// for one not seen before (implicit when it was seen on a frame only).
func (tb *treeBuilder) session(id string, implicit bool) int {
	if n, ok := tb.sessions[id]; ok {
		if !implicit {
			tb.nodes[n].implicit = false
		}
		return n
	}
	n := tb.add(&viewNode{Kind: nodeSession, Parent: -1, Session: id, implicit: implicit})
	tb.sessions[id] = n
	return n
}

func (tb *treeBuilder) add(nd *viewNode) int {
	nd.ID = len(tb.nodes)
	nd.First, nd.Last = -1, -1
	tb.nodes = append(tb.nodes, nd)
	return nd.ID
}

// childNode returns the node of child session id announced on session
// parent, creating or re-homing it.
func (tb *treeBuilder) childNode(id, parent string) int {
	if n, ok := tb.sessions[id]; ok {
		nd := tb.nodes[n]
		if nd.Kind == nodeSession && nd.implicit && id != parent {
			nd.Kind, nd.Parent = nodeChild, tb.session(parent, true)
		}
		tb.link(n)
		return n
	}
	n := tb.add(&viewNode{Kind: nodeChild, Parent: tb.session(parent, true), Session: id})
	tb.sessions[id] = n
	tb.link(n)
	return n
}

// link puts child node n under the launch call linked to it, if any.
func (tb *treeBuilder) link(n int) {
	nd := tb.nodes[n]
	if l, ok := tb.children[nd.Session]; ok && nd.Kind == nodeChild && !tb.ancestor(n, l) {
		nd.Parent = l
	}
}

// ancestor reports whether n is a or one of a's ancestors (linking n
// under a would then make a cycle).
func (tb *treeBuilder) ancestor(n, a int) bool {
	for a >= 0 {
		if a == n {
			return true
		}
		a = tb.nodes[a].Parent
	}
	return false
}

// update adds a session/update on session sid.
func (tb *treeBuilder) update(i int, t *float64, sid string, params []byte) int {
	u, _ := rawjson.Lookup(params, "update")
	tag, _ := rawjson.LookupString(u, "sessionUpdate")
	switch tag {
	case "tool_call", "tool_call_update":
		if n := tb.toolCall(i, t, sid, tag, u); n >= 0 {
			return n
		}
	case "subagent_update":
		return tb.subagentUpdate(i, t, sid, u)
	case "subagent_spawned", "subagent_state_update":
		return tb.draft(i, t, sid, tag, u)
	case "session_message":
		for _, k := range []string{"recipientSessionId", "senderSessionId"} {
			if c, ok := rawjson.LookupString(u, k); ok {
				if n, ok := tb.sessions[c]; ok && tb.nodes[n].Kind == nodeChild {
					return n
				}
			}
		}
	}
	if p := parentOf(u); p != "" {
		if l, ok := tb.byTool[p]; ok {
			if c := tb.nodes[l].Child; c != "" {
				if n, ok := tb.sessions[c]; ok && sid == c {
					return n
				}
			}
			return l
		}
	}
	if sid == "" {
		return -1
	}
	return tb.session(sid, true)
}

// toolCall adds a tool call frame; it returns -1 when the call is no
// launch call.
func (tb *treeBuilder) toolCall(i int, t *float64, sid, tag string, u []byte) int {
	tc, _ := rawjson.LookupString(u, "toolCallId")
	key := launchKey{sid, tc}
	var snap *snapshotFields
	if raw, ok := rawjson.Lookup(u, "_meta", meta.Key, meta.SubagentMember); ok {
		snap = &snapshotFields{}
		if json.Unmarshal(raw, snap) != nil {
			snap = nil
		}
	}
	n, known := tb.launches[key]
	if known && tag == "tool_call" && final(tb.nodes[n].Status) {
		known = false // a reused toolCallId starts a new call (rule C6)
	}
	if !known {
		if snap == nil {
			return -1
		}
		// A launch by a subagent goes under that subagent: its child
		// session when the call runs there, else its launch call.
		parent := tb.session(sid, true)
		if p := parentOf(u); p != "" && tb.nodes[parent].Kind != nodeChild {
			if l, ok := tb.byTool[p]; ok {
				parent = l
			}
		}
		n = tb.add(&viewNode{Kind: nodeLaunch, Parent: parent, Session: sid, ToolCall: tc})
		tb.launches[key] = n
		tb.byTool[tc] = n
	}
	nd := tb.nodes[n]
	if title, ok := rawjson.LookupString(u, "title"); ok {
		nd.Title = title
	}
	if c := sessionLink(u); c != "" {
		tb.linkChild(n, c)
	}
	if snap != nil {
		nd.Vendor = orKeep(nd.Vendor, snap.Vendor)
		nd.Description = orKeep(nd.Description, snap.Description)
		if nd.Description == "" {
			nd.Description = firstLine(snap.Prompt)
		}
		nd.SubagentType = orKeep(nd.SubagentType, snap.SubagentType)
		nd.Model = orKeep(nd.Model, snap.Model)
		if nd.Model == "" {
			nd.Model = snap.ResolvedModel
		}
		if snap.Background != nil {
			nd.Background = snap.Background
		}
		var d float64
		if len(snap.DurationMs) > 0 && json.Unmarshal(snap.DurationMs, &d) == nil {
			nd.vendorMs = &d
		}
		if snap.ChildSessionID != "" {
			tb.linkChild(n, snap.ChildSessionID)
		}
		tb.status(nd, i, t, snap.Status)
	}
	return n
}

// linkChild links launch n to child session c.
func (tb *treeBuilder) linkChild(n int, c string) {
	tb.nodes[n].Child = c
	tb.children[c] = n
	if cn, ok := tb.sessions[c]; ok {
		tb.link(cn)
	}
}

// sessionLink is the child session of a {"type":"session"} content block
// of a tool call (rules S1, S2).
func sessionLink(u []byte) string {
	content, ok := rawjson.Lookup(u, "content")
	if !ok || rawjson.FirstByte(content) != '[' {
		return ""
	}
	var link string
	_ = rawjson.Elements(content, func(v []byte) bool {
		if typ, _ := rawjson.LookupString(v, "type"); typ == "session" {
			link, _ = rawjson.LookupString(v, "sessionId")
			return false
		}
		return true
	})
	return link
}

// subagentUpdate adds a standard subagent_update: sent on the parent
// session sid, its update.sessionId is the child; the other members are
// patches (null clears).
func (tb *treeBuilder) subagentUpdate(i int, t *float64, sid string, u []byte) int {
	child, ok := rawjson.LookupString(u, "sessionId")
	if !ok {
		return tb.session(sid, true)
	}
	n := tb.childNode(child, sid)
	nd := tb.nodes[n]
	patch := func(dst *string, key string) {
		if v, ok := rawjson.Lookup(u, key); ok {
			*dst, _ = rawjson.DecodeString(v) // null clears
		}
	}
	patch(&nd.Title, "title")
	patch(&nd.Description, "description")
	if st, ok := rawjson.Lookup(u, "state"); ok {
		state, _ := rawjson.LookupString(st, "state")
		if reason, ok := rawjson.LookupString(st, "stopReason"); ok && reason != "" {
			state += " (" + reason + ")"
		}
		tb.status(nd, i, t, state)
	}
	return n
}

// draft adds the draft dialect's subagent_spawned / subagent_state_update
// (subagent-sessions.md §2).
func (tb *treeBuilder) draft(i int, t *float64, sid, tag string, u []byte) int {
	child, ok := rawjson.LookupString(u, "subagentSessionId")
	if !ok {
		return tb.session(sid, true)
	}
	if tag == "subagent_spawned" {
		if tc, ok := vendorMeta(u, "toolCallId"); ok {
			if l, ok := tb.launches[launchKey{sid, tc}]; ok {
				tb.linkChild(l, child)
			}
		}
	}
	n := tb.childNode(child, sid)
	nd := tb.nodes[n]
	nd.Draft = true
	if tag == "subagent_spawned" {
		if name, ok := rawjson.LookupString(u, "name"); ok {
			nd.Title = name
		}
		if task, ok := rawjson.LookupString(u, "task"); ok {
			nd.Description = task
		}
		if m, ok := vendorMeta(u, "model"); ok {
			nd.Model = m
		}
		tb.status(nd, i, t, "running")
	} else if st, ok := rawjson.LookupString(u, "state"); ok {
		tb.status(nd, i, t, st)
	}
	return n
}

// status notes that node nd reached status v at row i.
func (tb *treeBuilder) status(nd *viewNode, i int, t *float64, v string) {
	if v == "" || v == nd.Status {
		return
	}
	nd.Status = v
	nd.States = append(nd.States, viewState{T: t, Row: i, V: v})
	if final(v) && t != nil {
		nd.endT = t // the last final status: launched, then completed
	}
}

// final reports whether a status ends a launch call or a child's work:
// rule M's final states (launched: the launch is over, the subagent
// detached), a draft terminal state, or a standard idle state.
func final(v string) bool {
	switch v {
	case "completed", "failed", "cancelled", "launched", "disconnected":
		return true
	}
	return strings.HasPrefix(v, "idle")
}

// finish computes the durations and returns the nodes.
func (tb *treeBuilder) finish() []*viewNode {
	for _, nd := range tb.nodes {
		switch {
		case nd.Kind == nodeSession:
		case nd.vendorMs != nil:
			nd.DurationMs, nd.Measured = nd.vendorMs, true
		case nd.firstT != nil && nd.endT != nil:
			d := *nd.endT - *nd.firstT
			nd.DurationMs = &d
		case nd.firstT != nil && nd.lastT != nil:
			d := *nd.lastT - *nd.firstT
			nd.DurationMs, nd.Open = &d, true
		}
		if nd.Kind != nodeSession && (!final(nd.Status) || nd.Status == "launched") {
			nd.Open = true // a detached subagent's end is not known
		}
	}
	if tb.nodes == nil {
		return []*viewNode{}
	}
	return tb.nodes
}

func orKeep(old, v string) string {
	if v != "" {
		return v
	}
	return old
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return terminal.Line(s, 80)
}

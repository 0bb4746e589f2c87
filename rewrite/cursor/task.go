package cursor

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite"
)

// call is what the proxy knows about one Cursor tool call.
type call struct {
	session string
	id      string
	task    bool // a subagent launch (C2)
	done    bool // completed or failed was seen
	// sawToolCall: a tool_call frame of this call was seen. A later
	// tool_call with the same id is a new call (C6); only an entry made
	// by S2's subagent_spawned before the call's tool_call is kept.
	sawToolCall bool

	vendorName   bool // the vendor sent a name for this call
	nameShown    bool // the client has a name (the vendor's or ours)
	titleOK      bool // the client shows a title that is not the placeholder
	contentShown bool // the client has content for this call
	vendorSent   bool // the vendor sent content for this call
	// lastContent is the vendor's last content array (nil when it was
	// larger than maxKeptContent or no array), so that a frame the proxy
	// adds to link a child session can repeat it instead of replacing it
	// (content replaces the whole list; P4).
	lastContent []byte
	linkShown   bool // the client has the child session link in content

	snap snapshot

	// S1
	child       string // the child session announced for this launch
	childTitled bool   // the child's title is the description
	childIdle   bool   // the child was reported idle
	promptSent  bool   // the prompt went to the child as a session_message
	draftChild  string // S2: Cursor's own subagentSessionId
	nativeShown bool   // S2: a subagent_update was sent for draftChild
}

// maxKeptContent bounds the vendor content kept per call (P6).
const maxKeptContent = 64 << 10

// contentWithLink returns the content of a frame the proxy adds to link
// child to the call: the vendor's last content plus the link when the
// vendor sent content, else the prompt (when known) and the link. ok is
// false when the vendor's content was not kept (too large or no array):
// the link then waits for the vendor's next frame with content.
func (c *call) contentWithLink(child string) (content json.RawMessage, ok bool) {
	if !c.vendorSent {
		return promptContent(c.snap.prompt, &child), true
	}
	if c.lastContent == nil {
		return nil, false
	}
	b, err := appendLinkArray(c.lastContent, child)
	if err != nil {
		return nil, false
	}
	return b, true
}

// snapshot is the rule-M subagent object, built from vendor data only.
type snapshot struct {
	toolName        string
	description     string
	prompt          string
	subagentType    string
	rawSubagentType json.RawMessage
	model           string
	agentID         string
	background      *bool
	status          string
	durationMs      json.RawMessage

	// agentID and durationMs came from cursor/task, which wins over
	// rawOutput whatever the order (docs/cursor.md).
	agentIDFromTask, durationFromTask bool
}

// subagentJSON is the wire form of the snapshot, in the documented order.
type subagentJSON struct {
	Vendor       string          `json:"vendor"`
	ToolName     string          `json:"toolName,omitempty"`
	Description  string          `json:"description,omitempty"`
	Prompt       string          `json:"prompt,omitempty"`
	SubagentType string          `json:"subagentType,omitempty"`
	Model        string          `json:"model,omitempty"`
	AgentID      string          `json:"agentId,omitempty"`
	Background   *bool           `json:"background,omitempty"`
	Status       string          `json:"status,omitempty"`
	DurationMs   json.RawMessage `json:"durationMs,omitempty"`
	Raw          *rawJSON        `json:"raw,omitempty"`
}

type rawJSON struct {
	SubagentType json.RawMessage `json:"subagentType,omitempty"`
}

// metaValue returns the value of _meta["acp-normalize"] for the call.
func (s *snapshot) metaValue() ([]byte, error) {
	j := subagentJSON{
		Vendor:       Name,
		ToolName:     s.toolName,
		Description:  s.description,
		Prompt:       s.prompt,
		SubagentType: s.subagentType,
		Model:        s.model,
		AgentID:      s.agentID,
		Background:   s.background,
		Status:       s.status,
		DurationMs:   s.durationMs,
	}
	if s.rawSubagentType != nil {
		j.Raw = &rawJSON{SubagentType: s.rawSubagentType}
	}
	return rewrite.Marshal(map[string]any{"subagent": j})
}

// setSubagentType records a vendor subagentType: a string is its own
// label; an object is flattened to a label and kept under raw.
func (s *snapshot) setSubagentType(raw []byte) {
	switch pipe.FirstByte(raw) {
	case '"':
		if l := str(raw); l != "" {
			s.subagentType, s.rawSubagentType = l, nil
		}
	case '{':
		if !json.Valid(raw) {
			return
		}
		s.rawSubagentType = bytes.Clone(raw)
		if l := subagentLabel(raw); l != "" {
			s.subagentType = l
		}
	}
}

// subagentLabel unwraps every "custom" layer of a Cursor subagentType,
// then takes the custom agent's name or the single remaining key.
func subagentLabel(raw []byte) string {
	for depth := 0; depth < 16 && pipe.FirstByte(raw) == '{'; depth++ {
		var keys []string
		var only []byte
		_ = pipe.Members(raw, func(m pipe.Member) bool {
			var k string
			if json.Unmarshal(append(append([]byte{'"'}, m.Key...), '"'), &k) == nil {
				keys = append(keys, k)
				only = m.Value
			}
			return true
		})
		if name, ok := pipe.Lookup(raw, "name"); ok {
			return str(name) // a custom agent, named or not
		}
		if len(keys) != 1 {
			return ""
		}
		if keys[0] == "custom" {
			raw = only
			continue
		}
		return keys[0]
	}
	if pipe.FirstByte(raw) == '"' {
		return str(raw)
	}
	return ""
}

// taskInfo is what a cursor/task request says.
type taskInfo struct {
	description, prompt, model, agentID string
	subagentType, durationMs            json.RawMessage
}

func parseTask(params []byte) taskInfo {
	var t taskInfo
	t.description = strAt(params, "description")
	t.prompt = strAt(params, "prompt")
	t.model = strAt(params, "model")
	t.agentID = strAt(params, "agentId")
	if v, ok := pipe.Lookup(params, "subagentType"); ok {
		t.subagentType = bytes.Clone(v)
	}
	if v, ok := pipe.Lookup(params, "durationMs"); ok && isNumber(v) {
		t.durationMs = bytes.Clone(v)
	}
	return t
}

func (s *snapshot) applyTask(t *taskInfo) {
	if s.toolName == "" {
		s.toolName = "task"
	}
	if t.description != "" {
		s.description = t.description
	}
	if t.prompt != "" {
		s.prompt = t.prompt
	}
	if t.model != "" {
		s.model = t.model
	}
	if t.agentID != "" {
		s.agentID, s.agentIDFromTask = t.agentID, true
	}
	if t.subagentType != nil {
		s.setSubagentType(t.subagentType)
	}
	if t.durationMs != nil {
		s.durationMs, s.durationFromTask = t.durationMs, true
	}
}

func isNumber(v []byte) bool {
	c := pipe.FirstByte(v)
	return (c == '-' || (c >= '0' && c <= '9')) && json.Valid(v)
}

// early is a cursor/task that arrived before its tool call (C4).
type early struct {
	session string
	info    taskInfo
}

// sessionUpdate handles an agent session/update.
func (r *rewriter) sessionUpdate(f *rewrite.Frame) (rewrite.Verdict, error) {
	upd, ok := f.Lookup("params", "update")
	if !ok || pipe.FirstByte(upd) != '{' {
		return rewrite.Verdict{}, nil
	}
	sid, _ := pipe.LookupString(f.Raw, "params", "sessionId")
	switch strAt(upd, "sessionUpdate") {
	case "tool_call":
		return r.toolCall(f, sid, upd, true)
	case "tool_call_update":
		return r.toolCall(f, sid, upd, false)
	case "subagent_spawned", "subagent_state_update":
		return r.draftSubagent(f, sid, upd)
	}
	return rewrite.Verdict{}, nil
}

// isPlaceholder reports whether a Cursor task title says nothing.
func isPlaceholder(title string) bool {
	return title == "Task: Subagent task" || title == "Task" || title == ""
}

// toolCall handles tool_call and tool_call_update frames (C2-C7, M, S1).
func (r *rewriter) toolCall(f *rewrite.Frame, sid string, upd []byte, isNew bool) (rewrite.Verdict, error) {
	var v rewrite.Verdict
	if !pipe.Valid(f.Raw) {
		// Malformed below the envelope: nothing can be spliced into it,
		// and no state is taken from it (P5).
		return v, rewrite.RuleErrorf("P5", "tool call frame is not valid JSON")
	}
	tcid := strAt(upd, "toolCallId")
	toolName := strAt(upd, "rawInput", "_toolName")
	hasName := present(upd, "name")
	r.touch(sid)
	if tcid == "" {
		// No correlation possible; C7 still applies.
		if toolName != "" && !hasName {
			return r.setName(f, toolName)
		}
		return v, nil
	}
	c, ok := r.calls.get(tcid)
	if ok && isNew && (c.sawToolCall || (sid != "" && c.session != sid)) {
		// C6: Cursor reuses toolCallIds across turns, and a call of a
		// cancelled turn never completes: a new tool_call is a new call.
		r.calls.delete(tcid)
		ok = false
	}
	if !ok {
		c = &call{session: sid, id: tcid}
		if k, old, ev := r.calls.put(tcid, c); ev {
			r.log.Debug("tool call table full; oldest entry dropped", "rule", "P6", "toolCallId", k, "session", old.session)
		}
	} else if c.session == "" {
		c.session = sid
	}
	if isNew {
		if !c.sawToolCall {
			// The client learns of the call from this tool_call: what
			// earlier frames (S2's spawn link) showed it starts over.
			c.nameShown, c.titleOK, c.contentShown, c.linkShown = false, false, false, false
			c.vendorSent, c.lastContent = false, nil
		}
		c.sawToolCall = true
	}
	if strings.EqualFold(toolName, "task") {
		c.task = true
		c.snap.toolName = toolName
	}
	if e, ok := r.early.get(tcid); ok {
		r.early.delete(tcid)
		c.task = true
		c.snap.applyTask(&e.info)
	}
	if hasName {
		c.vendorName, c.nameShown = true, true
	}
	// Every call is observed, so that a call that turns out to be a
	// subagent launch when cursor/task arrives (C2, C3) has its status.
	c.observe(upd)
	title, hasTitle := pipe.LookupString(upd, "title")
	if !c.task {
		if hasTitle && !isPlaceholder(title) {
			c.titleOK = true
		}
		if toolName != "" && !hasName {
			return r.setName(f, toolName)
		}
		return v, nil
	}
	frame := f.Raw
	var err error
	if t := c.wantTitle(title, hasTitle); t != "" {
		if frame, err = setUpdate(frame, t, "title"); err != nil {
			return v, rewrite.RuleErrorf("C4", "title: %w", err)
		}
	}
	if !hasName && (toolName != "" || !c.nameShown) {
		// C7: every frame with rawInput._toolName gets that name; C3/C4:
		// the first frame shown gets one even without it.
		name := toolName
		if name == "" {
			name = c.snap.toolNameOr()
		}
		if frame, err = setUpdate(frame, name, "name"); err != nil {
			return v, rewrite.RuleErrorf("C7", "name: %w", err)
		}
		c.nameShown = true
	}
	var pre, post [][]byte
	if r.s1() {
		pre = r.announce(c)
	}
	var link *string
	if child := c.childID(); child != "" {
		link = &child
	}
	switch {
	case !vendorContent(upd) && !c.contentShown && (c.snap.prompt != "" || link != nil):
		if frame, err = setUpdateRaw(frame, promptContent(c.snap.prompt, link), "content"); err != nil {
			return v, rewrite.RuleErrorf("C4", "content: %w", err)
		}
		c.contentShown = true
		c.linkShown = c.linkShown || link != nil
	case present(upd, "content") && link != nil:
		var linked bool
		if frame, linked, err = appendLink(frame, *link); err != nil {
			return v, rewrite.RuleErrorf("S1", "session link: %w", err)
		}
		c.linkShown = c.linkShown || linked
	}
	if r.s1() {
		post = r.finishChild(c)
	}
	if frame, err = setMeta(frame, &c.snap); err != nil {
		return v, rewrite.RuleErrorf("M", "%w", err)
	}
	if len(pre) == 0 {
		v.Replace(frame)
	} else {
		// Frames that must come before the tool call (S1): the first one
		// takes the frame's place, the rest and the frame follow it.
		v.Replace(pre[0])
		for _, p := range pre[1:] {
			v.Send(pipe.Client, p)
		}
		v.Send(pipe.Client, frame)
	}
	for _, p := range post {
		v.Send(pipe.Client, p)
	}
	return v, nil
}

func (s *snapshot) toolNameOr() string {
	if s.toolName != "" {
		return s.toolName
	}
	return "task"
}

// observe folds one tool call frame of a subagent launch into the call.
func (c *call) observe(upd []byte) {
	s := &c.snap
	if in, ok := pipe.Lookup(upd, "rawInput"); ok && pipe.FirstByte(in) == '{' {
		if d := strAt(in, "description"); d != "" && s.description == "" {
			s.description = d
		}
		if p := strAt(in, "prompt"); p != "" && s.prompt == "" {
			s.prompt = p
		}
		if m := strAt(in, "model"); m != "" && s.model == "" {
			s.model = m
		}
		if st, ok := pipe.Lookup(in, "subagentType"); ok && s.rawSubagentType == nil && s.subagentType == "" {
			s.setSubagentType(st)
		}
	}
	if out, ok := pipe.Lookup(upd, "rawOutput"); ok && pipe.FirstByte(out) == '{' {
		// rawOutput fills what cursor/task did not say (a later rawOutput
		// is newer than an earlier one, never than cursor/task).
		if d, ok := pipe.Lookup(out, "durationMs"); ok && isNumber(d) && !s.durationFromTask {
			s.durationMs = bytes.Clone(d)
		}
		if a := strAt(out, "agentId"); a != "" && !s.agentIDFromTask {
			s.agentID = a
		}
		if b, ok := pipe.Lookup(out, "isBackground"); ok {
			switch string(b) {
			case "true":
				t := true
				s.background = &t
			case "false":
				f := false
				s.background = &f
			}
		}
	}
	if v, ok := pipe.Lookup(upd, "content"); ok && string(v) != "null" {
		if vendorContent(upd) {
			c.contentShown, c.vendorSent = true, true
		}
		if c.vendorSent {
			c.lastContent = nil
			if pipe.FirstByte(v) == '[' && len(v) <= maxKeptContent {
				c.lastContent = bytes.Clone(v)
			}
		}
	}
	switch strAt(upd, "status") {
	case "pending":
		if !c.done && s.status == "" {
			s.status = "pending"
		}
	case "in_progress":
		if !c.done {
			s.status = "running"
		}
	case "completed":
		c.done = true
		s.status = "completed"
	case "failed":
		c.done = true
		s.status = "failed"
	}
	if c.done && s.status == "completed" && s.background != nil && *s.background {
		s.status = "launched" // C5
	}
}

// vendorContent reports whether a tool call frame carries content: a
// content member that is neither null nor an empty array.
func vendorContent(upd []byte) bool {
	v, ok := pipe.Lookup(upd, "content")
	if !ok || string(v) == "null" {
		return false
	}
	if pipe.FirstByte(v) != '[' {
		return true
	}
	any := false
	_ = pipe.Elements(v, func([]byte) bool { any = true; return false })
	return any
}

// wantTitle returns the title to set on a frame of a launch call, or "".
func (c *call) wantTitle(title string, hasTitle bool) string {
	if hasTitle && !isPlaceholder(title) {
		c.titleOK = true
		return ""
	}
	if c.snap.description == "" {
		return ""
	}
	want := "Task: " + c.snap.description
	if hasTitle || !c.titleOK {
		c.titleOK = true
		return want
	}
	return ""
}

// task handles cursor/task (C1, C3, C4, C6).
func (r *rewriter) task(f *rewrite.Frame) (rewrite.Verdict, error) {
	var v rewrite.Verdict
	v.DropFrame()
	if id := f.ID(); id != nil {
		reply, err := rewrite.Result(id, []byte("{}"))
		if err != nil {
			return v, rewrite.RuleErrorf("C1", "%w", err)
		}
		v.Send(pipe.Agent, reply)
	}
	params, _ := f.Lookup("params")
	tcid := strAt(params, "toolCallId")
	if tcid == "" {
		r.oddity("C1", "cursor/task without a string toolCallId answered {} and dropped")
		return v, nil
	}
	info := parseTask(params)
	c, ok := r.calls.get(tcid)
	if !ok {
		// C4: held until the tool call arrives.
		e := &early{session: r.attribute(params, ""), info: info}
		if k, _, ev := r.early.put(tcid, e); ev {
			r.log.Debug("unmatched cursor/task dropped by the cap", "rule", "P6", "toolCallId", k)
		}
		return v, nil
	}
	// C3: the tool call was already forwarded.
	c.task = true
	c.snap.applyTask(&info)
	if c.done && c.snap.status == "completed" && c.snap.background != nil && *c.snap.background {
		c.snap.status = "launched"
	}
	if c.session == "" {
		return v, nil
	}
	u := toolCallUpdate{SessionUpdate: "tool_call_update", ToolCallID: c.id}
	if !c.titleOK && c.snap.description != "" {
		u.Title = "Task: " + c.snap.description
		c.titleOK = true
	}
	if !c.nameShown {
		u.Name = c.snap.toolNameOr()
		c.nameShown = true
	}
	if !c.contentShown && c.snap.prompt != "" {
		u.Content = promptContent(c.snap.prompt, nil)
		c.contentShown = true
	}
	var pre, post [][]byte
	if r.s1() {
		pre = r.announce(c)
		if child := c.childID(); child != "" && u.Content != nil {
			u.Content = promptContent(c.snap.prompt, &child)
			c.linkShown = true
		} else if child != "" && !c.linkShown {
			if content, ok := c.contentWithLink(child); ok {
				u.Content = content
				c.contentShown, c.linkShown = true, true
			}
		}
		post = r.finishChild(c)
	}
	meta, err := c.snap.metaValue()
	if err != nil {
		return v, rewrite.RuleErrorf("M", "%w", err)
	}
	u.Meta = json.RawMessage(`{"acp-normalize":` + string(meta) + `}`)
	frame, err := sessionUpdateFrame(c.session, u)
	if err != nil {
		return v, rewrite.RuleErrorf("C3", "%w", err)
	}
	for _, p := range pre {
		v.Send(pipe.Client, p)
	}
	v.Send(pipe.Client, frame)
	for _, p := range post {
		v.Send(pipe.Client, p)
	}
	return v, nil
}

// toolCallUpdate is a tool_call_update the proxy builds.
type toolCallUpdate struct {
	SessionUpdate string          `json:"sessionUpdate"`
	ToolCallID    string          `json:"toolCallId"`
	Title         string          `json:"title,omitempty"`
	Name          string          `json:"name,omitempty"`
	Content       json.RawMessage `json:"content,omitempty"`
	Meta          json.RawMessage `json:"_meta,omitempty"`
}

// promptContent returns a content array with the prompt as text (when not
// empty) and the child session link (when child is set).
func promptContent(prompt string, child *string) json.RawMessage {
	type text struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	type block struct {
		Type      string `json:"type"`
		Content   *text  `json:"content,omitempty"`
		SessionID string `json:"sessionId,omitempty"`
	}
	items := []block{}
	if prompt != "" {
		items = append(items, block{Type: "content", Content: &text{"text", prompt}})
	}
	if child != nil {
		items = append(items, block{Type: "session", SessionID: *child})
	}
	b, err := rewrite.Marshal(items)
	if err != nil { // strings always encode
		return json.RawMessage("[]")
	}
	return b
}

// setName applies rule C7 to a frame.
func (r *rewriter) setName(f *rewrite.Frame, name string) (rewrite.Verdict, error) {
	var v rewrite.Verdict
	out, err := setUpdate(f.Raw, name, "name")
	if err != nil {
		return v, rewrite.RuleErrorf("C7", "%w", err)
	}
	v.Replace(out)
	return v, nil
}

// setUpdate sets params.update.<key> to the string s.
func setUpdate(frame []byte, s string, key string) ([]byte, error) {
	b, err := rewrite.Marshal(s)
	if err != nil {
		return nil, err
	}
	return setUpdateRaw(frame, b, key)
}

func setUpdateRaw(frame, value []byte, key string) ([]byte, error) {
	return rewrite.Set(frame, value, "params", "update", key)
}

// setMeta puts the M snapshot at params.update._meta["acp-normalize"],
// keeping the vendor's other _meta keys.
func setMeta(frame []byte, s *snapshot) ([]byte, error) {
	meta, err := s.metaValue()
	if err != nil {
		return nil, err
	}
	if m, ok := pipe.Lookup(frame, "params", "update", "_meta"); ok && pipe.FirstByte(m) != '{' {
		return setUpdateRaw(frame, []byte(`{"acp-normalize":`+string(meta)+`}`), "_meta")
	}
	return rewrite.Set(frame, meta, "params", "update", "_meta", "acp-normalize")
}

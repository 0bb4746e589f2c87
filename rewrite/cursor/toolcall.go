package cursor

import (
	"strings"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/rewrite/meta"
)

// sessionUpdate handles an agent session/update.
func (r *rewriter) sessionUpdate(f *rewrite.Frame) (rewrite.Verdict, error) {
	params := f.Envelope().Params // found by the router's walk of the frame
	if params == nil {
		return rewrite.Verdict{}, nil
	}
	// One walk of params, into its update, reads every member the module
	// needs: a tool call's content can be megabytes, skipped once rather
	// than once per member.
	var p [2][]byte
	var u updateMembers
	if rawjson.PickIn(params, paramsKeys[:], p[:], "update", updateKeyNames[:], u[:]) != nil {
		return rewrite.Verdict{}, nil
	}
	sid, upd := str(p[0]), p[1]
	if rawjson.FirstByte(upd) != '{' {
		return rewrite.Verdict{}, nil
	}
	switch str(u[updSessionUpdate]) {
	case "tool_call":
		return r.toolCall(f, sid, &u, true)
	case "tool_call_update":
		return r.toolCall(f, sid, &u, false)
	}
	return rewrite.Verdict{}, nil
}

// paramsKeys are the members of a session/update's params the module reads.
var paramsKeys = [...]string{"sessionId", "update"}

// updateMembers are the raw values of a session/update's update members
// the module reads (nil when absent), indexed by the upd* constants.
type updateMembers [len(updateKeyNames)][]byte

// updateKeyNames lists the members in the order of the upd* constants
// (read-only, like paramsKeys).
var updateKeyNames = [...]string{"sessionUpdate", "toolCallId", "rawInput", "rawOutput", "name", "title", "content", "status"}

const (
	updSessionUpdate = iota
	updToolCallID
	updRawInput
	updRawOutput
	updName
	updTitle
	updContent
	updStatus
)

// toolCallFrame is what a tool_call or tool_call_update frame says.
type toolCallFrame struct {
	raw      []byte
	u        *updateMembers
	isNew    bool   // a tool_call, not an update
	id       string // toolCallId
	toolName string // rawInput._toolName
	hasName  bool
	title    string
	hasTitle bool
}

func readToolCall(raw []byte, u *updateMembers, isNew bool) *toolCallFrame {
	fr := &toolCallFrame{raw: raw, u: u, isNew: isNew,
		id:      str(u[updToolCallID]),
		hasName: notNull(u[updName]),
	}
	if in := u[updRawInput]; in != nil {
		fr.toolName = strAt(in, "_toolName")
	}
	fr.title, fr.hasTitle = rawjson.DecodeString(u[updTitle])
	return fr
}

// notNull reports whether a member's raw value (nil when absent) is
// present and not null.
func notNull(v []byte) bool { return v != nil && string(v) != "null" }

// toolCall handles tool_call and tool_call_update frames (C2-C7, M).
func (r *rewriter) toolCall(f *rewrite.Frame, sid string, u *updateMembers, isNew bool) (rewrite.Verdict, error) {
	fr := readToolCall(f.Raw, u, isNew)
	r.touch(sid)
	if fr.id == "" {
		return nameOnly(fr) // no correlation possible; C7 still applies
	}
	c := r.track(fr, sid)
	if !c.task {
		if fr.hasTitle && !isPlaceholder(fr.title) {
			c.shown.title = true
		}
		return nameOnly(fr)
	}
	return r.launchFrame(c, fr)
}

// nameOnly applies rule C7 alone: a frame with rawInput._toolName and no
// name gets that name.
func nameOnly(fr *toolCallFrame) (rewrite.Verdict, error) {
	var v rewrite.Verdict
	if fr.toolName == "" || fr.hasName {
		return v, nil
	}
	out, err := setUpdate(fr.raw, fr.toolName, "name")
	if err != nil {
		return v, rewrite.RuleErrorf("C7", "%w", err)
	}
	v.Replace(out)
	return v, nil
}

// track finds or starts the state of the frame's call and folds the frame
// into it. Every call is observed, so that a call that turns out to be a
// subagent launch when cursor/task arrives (C2, C3) has its status.
func (r *rewriter) track(fr *toolCallFrame, sid string) *call {
	c, ok := r.calls.Get(fr.id)
	if ok && fr.isNew && (c.sawToolCall || (sid != "" && c.session != sid)) {
		// C6: Cursor reuses toolCallIds across turns, and a call of a
		// cancelled turn never completes: a new tool_call is a new call.
		r.calls.Delete(fr.id)
		ok = false
	}
	if !ok {
		c = &call{session: sid, id: fr.id}
		r.calls.Put(fr.id, c)
	} else if c.session == "" {
		c.session = sid
	}
	if fr.isNew {
		if !c.sawToolCall {
			c.startOver()
		}
		c.sawToolCall = true
	}
	if strings.EqualFold(fr.toolName, "task") {
		c.task = true
		c.snap.toolName = fr.toolName
	}
	if e, ok := r.early.Get(fr.id); ok {
		r.early.Delete(fr.id)
		c.task = true
		c.snap.applyTask(&e.info)
	}
	if fr.hasName {
		c.vendor.name, c.shown.name = true, true
	}
	c.observe(fr.u)
	r.calls.Resize(fr.id) // what the call holds may have grown (P6)
	return c
}

// launchFrame completes a frame of a subagent launch call: the title
// (C4), the name (C3, C4, C7), the prompt as content (C4), the call's
// last vendor status when it gains a title or content (P7), and the
// snapshot (M), from which the sessions module makes the call's child
// session (S1). The frame is rebuilt once, whatever it gains.
func (r *rewriter) launchFrame(c *call, fr *toolCallFrame) (rewrite.Verdict, error) {
	edits := c.titleAndName(fr, nil)
	edits = c.promptEdit(fr.u[updContent], edits)
	edits = c.statusWith(fr.u[updStatus], edits)
	snap, err := meta.SubagentEdit(fr.raw, c.snap.subagent(), "params", "update")
	if err != nil {
		return rewrite.Verdict{}, rewrite.RuleErrorf("M", "%w", err)
	}
	frame, err := rawjson.SetAll(fr.raw, append(edits, snap)...)
	if err != nil {
		return rewrite.Verdict{}, rewrite.RuleErrorf("C4", "%w", err)
	}
	var v rewrite.Verdict
	v.Replace(frame)
	return v, nil
}

// titleAndName appends the edits that give a launch-call frame the title
// and name it lacks.
func (c *call) titleAndName(fr *toolCallFrame, edits []rawjson.Edit) []rawjson.Edit {
	if t := c.wantTitle(fr.title, fr.hasTitle); t != "" {
		edits = append(edits, updateEdit("title", rawjson.Text(t)))
	}
	if !fr.hasName && (fr.toolName != "" || !c.shown.name) {
		// C7: every frame with rawInput._toolName gets that name; C3/C4:
		// the first frame shown gets one even without it.
		name := fr.toolName
		if name == "" {
			name = c.snap.toolNameOr()
		}
		edits = append(edits, updateEdit("name", rawjson.Text(name)))
		c.shown.name = true
	}
	return edits
}

// promptEdit appends the edit that gives a launch-call frame without
// content (its raw content member, nil when absent) the prompt, the
// first time the prompt is known and the client has no content of the
// call (C3, C4).
func (c *call) promptEdit(content []byte, edits []rawjson.Edit) []rawjson.Edit {
	if !vendorContent(content) && !c.shown.content && c.snap.prompt != "" {
		edits = append(edits, updateEdit("content", promptContent(c.snap.prompt)))
		c.shown.content = true
	}
	return edits
}

// statusWith appends, when the proxy gives a frame without a status
// (status, its raw member, nil when absent) a title or content, the
// edit that says the call's last vendor status too (P7): a client that
// reads a status-less update with content as running would otherwise
// show a finished call running again.
func (c *call) statusWith(status []byte, edits []rawjson.Edit) []rawjson.Edit {
	if status != nil || c.vendorStatus == "" {
		return edits
	}
	for _, e := range edits {
		if k := e.Path[len(e.Path)-1]; k == "title" || k == "content" {
			return append(edits, updateEdit("status", rawjson.Text(c.vendorStatus)))
		}
	}
	return edits
}

// updateEdit sets params.update.<key>.
func updateEdit(key string, value []byte) rawjson.Edit {
	return rawjson.Edit{Path: []string{"params", "update", key}, Value: value}
}

// setUpdate sets params.update.<key> to the string s.
func setUpdate(frame []byte, s string, key string) ([]byte, error) {
	return rawjson.SetAll(frame, updateEdit(key, rawjson.Text(s)))
}

package qwen

import (
	"bytes"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/rewrite/launch"
	"github.com/acp-normalize/acp-normalize/rewrite/meta"
	"github.com/acp-normalize/acp-normalize/rewrite/table"
)

// Name is the module's name.
const Name = "qwen"

// agentNames are the initialize result's agentInfo.name values of Qwen
// Code (rule V1; matched exactly).
func agentNames() []string { return []string{"qwen-code"} }

// Module returns the qwen module.
func Module() rewrite.Module {
	return rewrite.Module{
		Name:   Name,
		Doc:    "Qwen Code: subagent snapshot on agent/task launch calls, parentToolCallId on subagent frames, background results (V1-V6)",
		Agents: agentNames(),
		// Quoted, so that a mention inside a string (escaped as \") does
		// not match: "toolName" is on every Qwen tool call; progress beats
		// and bare updates of a launch call are tool_call_updates.
		Triggers: []string{
			rewrite.AgentInfoTrigger,       // who the agent is (V1)
			`"tool_call"`,                  // launch calls (V2)
			`"tool_call_update"`,           // their updates (V2, V3, V6)
			`"parentToolCallId"`,           // child frames (V4)
			`"backgroundTask"`,             // background results (V5)
			`"session/request_permission"`, // child permission requests (V4)
			`"session/close"`,              // state dropped (P6)
		},
		New: func(env rewrite.Env) rewrite.Rewriter {
			return &rewriter{
				id:    rewrite.NewIdentity(env, Name, agentNames()...),
				calls: launch.NewCalls(env),
				children: rewrite.NewTable(env, table.Config[launch.Key, []byte]{Name: "child tool calls",
					Size:    func(k launch.Key, p []byte) int64 { return int64(len(k.Session) + len(k.ToolCallID) + len(p)) },
					Session: func(k launch.Key, _ []byte) string { return k.Session }}),
			}
		},
	}
}

// The interfaces a rewriter implements, checked by the compiler: only
// Rewriter (no requests of its own to follow, nothing to say at the end).
var _ rewrite.Rewriter = (*rewriter)(nil)

// rewriter is the module's state for one connection.
type rewriter struct {
	id    *rewrite.Identity
	calls *launch.Calls
	// children maps a child tool call to its launch call's id, as the
	// raw JSON string Qwen wrote (V4: permission requests name only the
	// child).
	children *table.Table[launch.Key, []byte]
}

// Rewrite implements rewrite.Rewriter.
func (r *rewriter) Rewrite(f *rewrite.Frame) (rewrite.Verdict, error) {
	if !r.id.Known(f) {
		return rewrite.Verdict{}, nil
	}
	env := f.Envelope()
	switch {
	case f.From == pipe.Agent && env.Kind == pipe.Notification && env.MethodIs("session/update"):
		return r.sessionUpdate(f)
	case f.From == pipe.Agent && env.Kind == pipe.Request && env.MethodIs("session/request_permission"):
		return r.permission(f)
	}
	if sid, ok := r.calls.DropClosed(f); ok {
		r.children.DropSession(sid)
	}
	return rewrite.Verdict{}, nil
}

// sessionUpdate handles the agent's session/update notifications.
func (r *rewriter) sessionUpdate(f *rewrite.Frame) (rewrite.Verdict, error) {
	var v rewrite.Verdict
	update, ok := f.Lookup("params", "update")
	if !ok || rawjson.FirstByte(update) != '{' {
		return v, nil
	}
	rawSession, _ := f.Lookup("params", "sessionId")
	sid, _ := rawjson.DecodeString(rawSession)
	tag, _ := rawjson.LookupString(update, "sessionUpdate")
	parent, err := parentOf(update)
	if err != nil {
		return v, err
	}
	out, changed := f.Raw, false
	if tag == "tool_call" || tag == "tool_call_update" {
		id, _ := rawjson.LookupString(update, "toolCallId")
		key := launch.Key{Session: sid, ToolCallID: id}
		if parent != nil && id != "" {
			// A copy: the frame's bytes are reused after the call.
			r.children.Put(key, bytes.Clone(parent))
		}
		if c := r.launchCall(key, update, tag == "tool_call"); c != nil {
			absorb(&c.Snap, update)
			r.calls.Changed(key)
			if out, err = c.Annotate(out, "params", "update"); err != nil {
				return v, rewrite.RuleErrorf("V2", "%w", err)
			}
			changed = true
		}
	} else if bg, ok := rawjson.Lookup(update, "_meta", "backgroundTask"); ok {
		emit, err := r.backgroundResult(rawSession, sid, bg)
		if err != nil {
			return v, err
		}
		if emit != nil {
			v.Send(pipe.Client, emit)
		}
	}
	return linked(v, out, changed, parent, "params", "update")
}

// linked finishes v for a frame, out being the frame with what the
// module added (changed: it added something): the object at obj gets its
// parentToolCallId when parent is set (V4), and the frame is replaced when
// the module wrote to it. Whether it wrote decides, not whether the bytes
// look different: a frame that carried a forged snapshot of our length
// must still go out with ours.
func linked(v rewrite.Verdict, out []byte, changed bool, parent []byte, obj ...string) (rewrite.Verdict, error) {
	if parent != nil {
		var err error
		if out, err = meta.SetParent(out, parent, obj...); err != nil {
			return v, rewrite.RuleErrorf("V4", "%w", err)
		}
		changed = true
	}
	if changed {
		v.Replace(out)
	}
	return v, nil
}

// launchCall returns the launch call an update belongs to, starting one
// for a tool call whose _meta.toolName is agent or task (V2); nil for
// any other tool call.
func (r *rewriter) launchCall(key launch.Key, update []byte, isToolCall bool) *launch.Call {
	if key.ToolCallID == "" {
		return nil
	}
	name, named := rawjson.LookupString(update, "_meta", "toolName")
	c, known := r.calls.Get(key)
	switch {
	case named && name != "agent" && name != "task":
		return nil
	case named && (!known || (isToolCall && c.Final())):
		// A new call, or an id reused after its call ended.
		return r.calls.Start(key, Name, name, name)
	}
	return c
}

// permission handles session/request_permission: the toolCall of a
// launch call carries the snapshot, that of a child tool call the parent
// link (V4).
func (r *rewriter) permission(f *rewrite.Frame) (rewrite.Verdict, error) {
	var v rewrite.Verdict
	tc, ok := f.Lookup("params", "toolCall")
	if !ok || rawjson.FirstByte(tc) != '{' {
		return v, nil
	}
	sid, _ := rawjson.LookupString(f.Raw, "params", "sessionId")
	id, _ := rawjson.LookupString(tc, "toolCallId")
	key := launch.Key{Session: sid, ToolCallID: id}
	out, changed := f.Raw, false
	var err error
	if c := r.launchCall(key, tc, false); c != nil {
		absorb(&c.Snap, tc)
		r.calls.Changed(key)
		if out, err = c.Annotate(out, "params", "toolCall"); err != nil {
			return v, rewrite.RuleErrorf("V2", "%w", err)
		}
		changed = true
	}
	parent, err := parentOf(tc)
	if err != nil {
		return v, err
	}
	if parent == nil {
		parent, _ = r.children.Get(key)
	}
	return linked(v, out, changed, parent, "params", "toolCall")
}

// backgroundResult applies a chunk's _meta.backgroundTask to the launch
// call it names (V5) and returns the tool_call_update to emit when the
// snapshot changed.
func (r *rewriter) backgroundResult(rawSession []byte, sid string, bg []byte) ([]byte, error) {
	toolUseID, _ := rawjson.LookupString(bg, "toolUseId")
	key := launch.Key{Session: sid, ToolCallID: toolUseID}
	c, ok := r.calls.Get(key)
	if !ok {
		return nil, nil // no launch call we know: nothing is guessed
	}
	changed := false
	if task, ok := rawjson.LookupString(bg, "taskId"); ok && task != "" && c.Snap.AgentID == nil {
		c.Snap.AgentID, changed = meta.Text(task), true
	}
	if st, ok := rawjson.LookupString(bg, "status"); ok {
		changed = c.Finish(status(st)) || changed
	}
	if !changed {
		return nil, nil
	}
	r.calls.Changed(key)
	out, err := c.UpdateFrame(rawSession, toolUseID)
	if err != nil {
		return nil, rewrite.RuleErrorf("V5", "%w", err)
	}
	return out, nil
}

// parentOf returns the raw JSON string of obj's _meta.parentToolCallId;
// null or "" names no parent (P4).
func parentOf(obj []byte) ([]byte, error) {
	p, ok := rawjson.Lookup(obj, "_meta", "parentToolCallId")
	if !ok || string(p) == "null" || string(p) == `""` {
		return nil, nil
	}
	if rawjson.FirstByte(p) != '"' {
		return nil, rewrite.RuleErrorf("V4", "_meta.parentToolCallId is not a string: %.40s", p)
	}
	return p, nil
}

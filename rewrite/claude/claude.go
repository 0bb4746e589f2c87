package claude

import (
	"log/slog"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/rewrite/meta"
	"github.com/acp-normalize/acp-normalize/rewrite/table"
)

// Name is the module's name on the command line and in the initialize
// advertisement.
const Name = "claude"

// AgentName is the agentInfo.name of Claude's ACP adapter.
const AgentName = "@agentclientprotocol/claude-agent-acp"

// Module returns the claude module.
func Module() rewrite.Module {
	return rewrite.Module{
		Name: Name,
		// It checks no agent name (V1 is for the later vendors): Claude's
		// frames are recognized by their _meta.claudeCode, whoever sends them.
		Agents: []string{AgentName},
		Doc:    "Claude ACP adapter: subagent snapshot on Agent/Task launch calls, parentToolCallId on subagent frames, running and background completion updates, person-readable resultText (L1-L8)",
		// "claudeCode" is on every launch-call and subagent frame and on
		// none of the main agent's ordinary text chunks (its informational
		// notices carry _meta.claudeCode: they are scanned and forwarded
		// unchanged); "session/close" drops a session's state (P6).
		// Quoted, so that a mention inside a string (escaped as
		// \"claudeCode\") does not match.
		// "handback" is on the usage_update that hands back a background
		// subagent's report (L7), which carries no claudeCode.
		Triggers: []string{`"claudeCode"`, `"session/close"`, `"handback"`},
		New:      func(env rewrite.Env) rewrite.Rewriter { return newRewriter(env) },
	}
}

// callKey identifies a launch call (L2).
type callKey struct {
	session, toolCallID string
}

// The interfaces a rewriter implements, checked by the compiler: only
// Rewriter (no requests of its own to follow, nothing to say at the end).
var _ rewrite.Rewriter = (*rewriter)(nil)

// rewriter is the module's state for one connection.
type rewriter struct {
	log    *slog.Logger
	calls  *table.Table[callKey, *call]
	client *rewrite.Client // the connection's client (P7)
}

func newRewriter(env rewrite.Env) *rewriter {
	env.Logger = env.Log()
	return &rewriter{log: env.Logger, client: env.Client, calls: rewrite.NewTable(env, table.Config[callKey, *call]{
		Name:     "launch calls",
		Size:     func(_ callKey, c *call) int64 { return c.bytes() },
		Session:  func(k callKey, _ *call) string { return k.session },
		Describe: func(k callKey, _ *call) []any { return []any{"sessionId", k.session, "toolCallId", k.toolCallID} },
	})}
}

// Rewrite implements rewrite.Rewriter.
func (r *rewriter) Rewrite(f *rewrite.Frame) (rewrite.Verdict, error) {
	kind := f.Kind()
	if kind != pipe.Notification && kind != pipe.Request {
		return rewrite.Verdict{}, nil
	}
	env := f.Envelope()
	switch {
	case f.From == pipe.Agent && env.MethodIs("session/update"):
		return r.sessionUpdate(f)
	case f.From == pipe.Agent && env.MethodIs("session/request_permission"):
		return r.permissionRequest(f)
	case f.From == pipe.Client && env.MethodIs("session/close"):
		r.closeSession(f)
	}
	return rewrite.Verdict{}, nil
}

// sessionUpdate handles a session/update: launch-call frames get the
// snapshot (L3), subagent frames the parent link (L4).
func (r *rewriter) sessionUpdate(f *rewrite.Frame) (rewrite.Verdict, error) {
	update, cc, ok := claudeCodeOf(f, "params", "update")
	switch {
	case !ok:
		return rewrite.Verdict{}, nil
	case cc == nil:
		return r.handback(f, update) // L7; anything else is never touched
	}
	tag, _ := rawjson.LookupString(update, "sessionUpdate")
	switch tag {
	case "subagent_update", "session_message":
		return rewrite.Verdict{}, nil // native subagent sessions pass through (L5, S3)
	}
	parent, hasParent, err := parentOf(cc, "_meta.claudeCode")
	if err != nil {
		return rewrite.Verdict{}, err
	}
	var c *call
	if tag == "tool_call" || tag == "tool_call_update" {
		session, _ := f.Lookup("params", "sessionId")
		if c, err = r.observe(session, update, cc, tag == "tool_call", false); err != nil {
			return rewrite.Verdict{}, err
		}
	}
	return r.annotated(f, c, parent, hasParent, "params", "update")
}

// annotated gives the object at obj of f the snapshot of c, when f is a
// frame of launch call c, and the parent link of a child frame. (The
// launch call's running update after its first child frame, L6, is the
// sessions module's, rule S8 for every vendor.)
func (r *rewriter) annotated(f *rewrite.Frame, c *call, parent []byte, hasParent bool, obj ...string) (rewrite.Verdict, error) {
	var snap *meta.Subagent
	if c != nil {
		snap = c.snapshot()
	}
	return annotate(f.Raw, snap, parent, hasParent, obj...)
}

// permissionRequest handles a session/request_permission: the marker and
// the added metadata live in the _meta of params.toolCall, the thing the
// request is about.
func (r *rewriter) permissionRequest(f *rewrite.Frame) (rewrite.Verdict, error) {
	tc, cc, ok := claudeCodeOf(f, "params", "toolCall")
	if !ok || cc == nil {
		return rewrite.Verdict{}, nil
	}
	parent, hasParent, err := parentOf(cc, "toolCall._meta.claudeCode")
	if err != nil {
		return rewrite.Verdict{}, err
	}
	session, _ := f.Lookup("params", "sessionId")
	c, err := r.observe(session, tc, cc, false, true)
	if err != nil {
		return rewrite.Verdict{}, err
	}
	return r.annotated(f, c, parent, hasParent, "params", "toolCall")
}

// claudeCodeOf returns the object at path in f and its _meta.claudeCode
// (nil when absent); false when f has no object there.
func claudeCodeOf(f *rewrite.Frame, path ...string) (obj, cc []byte, ok bool) {
	obj, ok = f.Lookup(path...)
	if !ok || rawjson.FirstByte(obj) != '{' {
		return nil, nil, false
	}
	cc, _ = rawjson.Lookup(obj, "_meta", "claudeCode")
	return obj, cc, true
}

// parentOf returns the raw JSON string of claudeCode.parentToolUseId,
// cc being the claudeCode object found at where (an error when it is no
// object). A null or empty parentToolUseId names no parent: it is treated
// as absent, so that no parentToolCallId:"" is invented (P4) on a
// main-agent frame.
func parentOf(cc []byte, where string) (raw []byte, ok bool, err error) {
	if rawjson.FirstByte(cc) != '{' {
		return nil, false, rewrite.RuleErrorf("L4", "%s is not an object", where)
	}
	p, ok := rawjson.Lookup(cc, "parentToolUseId")
	if !ok || string(p) == "null" || string(p) == `""` {
		return nil, false, nil
	}
	if rawjson.FirstByte(p) != '"' {
		return nil, false, rewrite.RuleErrorf("L4", "parentToolUseId is not a string: %.40s", p)
	}
	return p, true, nil
}

// annotate splices snap (the subagent snapshot, or nil) and the parent
// link into the _meta of the object at obj, keeping every other byte of
// frame.
func annotate(frame []byte, snap *meta.Subagent, parent []byte, hasParent bool, obj ...string) (rewrite.Verdict, error) {
	var v rewrite.Verdict
	if snap == nil && !hasParent {
		return v, nil
	}
	out := frame
	var err error
	if snap != nil {
		if out, err = meta.SetSubagent(out, snap, obj...); err != nil {
			return v, rewrite.RuleErrorf("L3", "%w", err)
		}
	}
	if hasParent {
		// The vendor's own JSON string, byte for byte.
		if out, err = meta.SetParent(out, parent, obj...); err != nil {
			return v, rewrite.RuleErrorf("L4", "%w", err)
		}
	}
	v.Replace(out)
	return v, nil
}

// observe finds or starts the state of the launch call that obj (an
// update, or a permission request's toolCall) belongs to, and folds obj
// into it. It returns nil when obj is no launch-call frame (L1).
func (r *rewriter) observe(rawSession, obj, cc []byte, isToolCall, isPermission bool) (*call, error) {
	id, ok := rawjson.LookupString(obj, "toolCallId")
	if !ok {
		return nil, nil
	}
	session, _ := rawjson.DecodeString(rawSession)
	key := callKey{session: session, toolCallID: id}
	name, named := rawjson.LookupString(cc, "toolName")
	if !named {
		name, named = rawjson.LookupString(obj, "name")
	}
	c, known := r.calls.Get(key)
	if named && !isLaunchTool(name) {
		return nil, nil
	}
	if !named && !known {
		return nil, nil // a frame without a tool name joins a known launch call only
	}
	if known && isToolCall && c.finished() {
		// The id starts a new call after the old one ended (a replay):
		// a fresh entry, as for Cursor's reused ids (C6).
		r.calls.Delete(key)
		known = false
	}
	if !known {
		c = &call{key: key, toolName: name}
		r.calls.Put(key, c)
	}
	err := c.absorb(obj, cc, isPermission)
	r.calls.Resize(key) // the state held grew (P6)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// isLaunchTool reports whether a Claude tool name launches a subagent (L1).
func isLaunchTool(name string) bool { return name == "Agent" || name == "Task" }

// closeSession drops the state of the session a session/close names (P6).
func (r *rewriter) closeSession(f *rewrite.Frame) {
	session, ok := f.Lookup("params", "sessionId")
	if !ok {
		return
	}
	s, ok := rawjson.DecodeString(session)
	if !ok {
		return
	}
	if n := r.calls.DropSession(s); n > 0 {
		r.log.Debug("session closed: launch call state dropped", "rule", "P6", "sessionId", s, "calls", n)
	}
}

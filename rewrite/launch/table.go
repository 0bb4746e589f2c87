package launch

import (
	"github.com/acp-normalize/acp-normalize/internal/rawjson"
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/rewrite/table"
)

// NewTable returns a connection's capped table of per-launch-call state
// (P6: entries and bytes within env's budget, dropped with their
// session), named name in its log lines; size counts the bytes a value
// holds besides its key.
func NewTable[V any](env rewrite.Env, name string, size func(V) int64) *table.Table[Key, V] {
	return rewrite.NewTable(env, table.Config[Key, V]{
		Name:     name,
		Size:     func(k Key, v V) int64 { return int64(len(k.Session)+len(k.ToolCallID)) + size(v) },
		Session:  func(k Key, _ V) string { return k.Session },
		Describe: func(k Key, _ V) []any { return []any{"sessionId", k.Session, "toolCallId", k.ToolCallID} },
	})
}

// DropClosed forgets the entries of the session a client's session/close
// ends (P6), and returns that session's id; false for any other frame.
func DropClosed[V any](f *rewrite.Frame, t *table.Table[Key, V]) (string, bool) {
	sid, ok := rewrite.ClosedSession(f)
	if ok {
		t.DropSession(sid)
	}
	return sid, ok
}

// Route is the Rewrite of a vendor module that changes only session/update
// notifications: nothing until id knows the agent (V1), then update for a
// session/update, and a client's session/close drops the session's calls
// (P6).
func Route[V any](f *rewrite.Frame, id *rewrite.Identity, calls *table.Table[Key, V], update func(*rewrite.Frame) (rewrite.Verdict, error)) (rewrite.Verdict, error) {
	if !id.Known(f) {
		return rewrite.Verdict{}, nil
	}
	if f.Method() == "session/update" {
		return update(f)
	}
	DropClosed(f, calls)
	return rewrite.Verdict{}, nil
}

// ToolCall is a session/update about one tool call.
type ToolCall struct {
	// Update is the frame's params.update object.
	Update []byte
	// Tag is its sessionUpdate: "tool_call" (the call starts) or
	// "tool_call_update".
	Tag string
	// Key is its sessionId and toolCallId.
	Key Key
}

// Starts reports whether the update is the tool_call that starts the call.
func (tc ToolCall) Starts() bool { return tc.Tag == "tool_call" }

// ToolCallOf returns the tool call a session/update frame is about;
// false for any other update, and for one without a toolCallId string.
func ToolCallOf(f *rewrite.Frame) (ToolCall, bool) {
	upd, ok := f.Lookup("params", "update")
	if !ok {
		return ToolCall{}, false
	}
	tag, _ := rawjson.LookupString(upd, "sessionUpdate")
	if tag != "tool_call" && tag != "tool_call_update" {
		return ToolCall{}, false
	}
	id, ok := rawjson.LookupString(upd, "toolCallId")
	if !ok {
		return ToolCall{}, false
	}
	sid, _ := rawjson.LookupString(f.Raw, "params", "sessionId")
	return ToolCall{Update: upd, Tag: tag, Key: Key{Session: sid, ToolCallID: id}}, true
}

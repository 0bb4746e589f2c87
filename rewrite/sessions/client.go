package sessions

import (
	"fmt"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/acp-normalize/acp-normalize/rewrite"
)

// readOnly answers a client frame that names a child session the proxy
// synthesized (S5): the agent knows no such session, so a request gets
// -32602 from the proxy with a message that says why, and a notification
// (session/cancel) is dropped and logged at warn: the user's action did
// nothing.
func (r *rewriter) readOnly(f *rewrite.Frame, method, sid string) rewrite.Verdict {
	parent := "its parent session"
	if ch, ok := r.children.Get(sid); ok {
		parent = "its parent session " + ch.parent
	}
	var v rewrite.Verdict
	v.DropFrame()
	if id := f.ID(); id != nil {
		msg := fmt.Sprintf("session %s is a subagent session acp-normalize made from a tool call of %s; it is read-only: %s goes to the parent", sid, parent, method)
		v.Send(f.From, rewrite.ErrorResponse(id, jsonrpc2.CodeInvalidParams, msg))
		r.log.Debug("request on a synthesized subagent session answered -32602", "rule", "S5", "method", method, "sessionId", sid)
		return v
	}
	r.log.Warn("notification on a read-only subagent session dropped: the agent has no such session; send it to "+parent,
		"rule", "S5", "method", method, "sessionId", sid)
	return v
}

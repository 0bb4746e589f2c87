package claude

import (
	"regexp"
	"strings"

	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite"
)

// childFrame applies L6 to a child frame (L4) of the launch call parent
// (a raw JSON string) in the session rawSession: when that call's snapshot
// says pending, the call is running from now on, and the returned frame
// (nil otherwise) says so to the client right after the child frame.
func (r *rewriter) childFrame(rawSession, parent []byte) ([]byte, error) {
	session, ok := decodeString(rawSession)
	id, idOK := decodeString(parent)
	if !ok || !idOK {
		return nil, nil
	}
	el := r.calls[callKey{session: session, toolCallID: id}]
	if el == nil {
		return nil, nil
	}
	c := el.Value.(*call)
	if c.status() != "pending" {
		return nil, nil
	}
	c.childSeen = true
	frame, err := launchUpdate(rawSession, parent, c)
	if err != nil {
		return nil, rewrite.RuleErrorf("L6", "%w", err)
	}
	return frame, nil
}

// handback applies L7 to a session/update that carries no claudeCode: a
// usage_update with the adapter's hand-back of a background subagent
// (_meta["_claude/origin"] kind "peer", handback true, from = agentId)
// completes the launched call of that agent in the same session. The
// update itself is forwarded unchanged; the verdict adds the launch
// call's update after it. Any other frame, or a hand-back that matches
// no launched call, changes nothing.
func (r *rewriter) handback(f *rewrite.Frame, update []byte) (rewrite.Verdict, error) {
	var v rewrite.Verdict
	origin, ok := pipe.Lookup(update, "_meta", "_claude/origin")
	if !ok || pipe.FirstByte(origin) != '{' {
		return v, nil
	}
	if kind, _ := pipe.LookupString(origin, "kind"); kind != "peer" {
		return v, nil
	}
	if hb, _ := pipe.Lookup(origin, "handback"); string(hb) != "true" {
		return v, nil
	}
	from, ok := pipe.LookupString(origin, "from")
	rawSession, sessionOK := f.Lookup("params", "sessionId")
	session, decoded := decodeString(rawSession)
	if !ok || from == "" || !sessionOK || !decoded {
		return v, nil
	}
	var c *call
	for el := r.order.Back(); el != nil; el = el.Prev() {
		cand := el.Value.(*call)
		if cand.key.session == session && cand.agentID != nil && *cand.agentID == from && cand.status() == "launched" {
			c = cand
			break
		}
	}
	if c == nil {
		return v, nil
	}
	c.handedBack = true
	if text, ok := pipe.LookupString(origin, "handbackReportText"); ok {
		c.peerReport = &text
	}
	id, err := rewrite.Marshal(c.key.toolCallID)
	if err != nil {
		return v, rewrite.RuleErrorf("L7", "encoding the toolCallId: %w", err)
	}
	frame, err := launchUpdate(rawSession, id, c)
	if err != nil {
		return v, rewrite.RuleErrorf("L7", "%w", err)
	}
	v.Send(pipe.Client, frame)
	return v, nil
}

// launchUpdate is the tool_call_update the proxy adds for a launch call
// (L6, L7): toolCallId, sessionUpdate and the snapshot, nothing the
// vendor did not say (no ACP status, P4). rawSession and rawID are JSON
// strings.
func launchUpdate(rawSession, rawID []byte, c *call) ([]byte, error) {
	snap, err := c.snapshot()
	if err != nil {
		return nil, err
	}
	var b []byte
	b = append(b, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":`...)
	b = append(b, rawSession...)
	b = append(b, `,"update":{"toolCallId":`...)
	b = append(b, rawID...)
	b = append(b, `,"sessionUpdate":"tool_call_update","_meta":{"acp-normalize":{"subagent":`...)
	b = append(b, snap...)
	return append(b, "}}}}}"...), nil
}

// bookkeeping matches what Claude Code adds to a subagent's result for the
// main model, not for a person (L8): the tools-used and usage tags with
// their content, and the "agentId: ... (use SendMessage ...)" trailer line.
var bookkeeping = regexp.MustCompile(`(?s)<tools-used-before-summary>.*?</tools-used-before-summary>` +
	`|<usage>.*?</usage>` +
	`|(?m)^agentId: [^\n]*SendMessage[^\n]*$`)

// personText returns a result text without Claude Code's bookkeeping,
// trimmed (L8); nil when nothing is left (an empty resultText would be
// invented, P4).
func personText(s *string) *string {
	if s == nil {
		return nil
	}
	t := strings.TrimSpace(bookkeeping.ReplaceAllString(*s, ""))
	if t == "" {
		return nil
	}
	return &t
}

package claude

import (
	"regexp"
	"strings"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/rewrite/meta"
)

// handback applies L7 to a session/update that carries no claudeCode: a
// usage_update with the adapter's hand-back of a background subagent
// (_meta["_claude/origin"] kind "peer", handback true, from = agentId)
// completes the launched call of that agent in the same session. The
// update itself is forwarded unchanged; the verdict adds the launch
// call's update after it. Any other frame, or a hand-back that matches
// no launched call, changes nothing.
func (r *rewriter) handback(f *rewrite.Frame, update []byte) (rewrite.Verdict, error) {
	var v rewrite.Verdict
	origin, ok := rawjson.Lookup(update, "_meta", "_claude/origin")
	if !ok || rawjson.FirstByte(origin) != '{' {
		return v, nil
	}
	if kind, _ := rawjson.LookupString(origin, "kind"); kind != "peer" {
		return v, nil
	}
	if hb, _ := rawjson.Lookup(origin, "handback"); string(hb) != "true" {
		return v, nil
	}
	from, ok := rawjson.LookupString(origin, "from")
	rawSession, sessionOK := f.Lookup("params", "sessionId")
	session, decoded := rawjson.DecodeString(rawSession)
	if !ok || from == "" || !sessionOK || !decoded {
		return v, nil
	}
	var c *call
	r.calls.Each(func(k callKey, cand *call) bool {
		// The newest match wins: Each goes oldest first.
		if k.session == session && cand.agentID != nil && *cand.agentID == from && cand.status() == "launched" {
			c = cand
		}
		return true
	})
	if c == nil {
		return v, nil
	}
	c.handedBack = true
	if text, ok := rawjson.LookupString(origin, "handbackReportText"); ok {
		c.peerReport = &text
	}
	r.calls.Resize(c.key) // the report counts against the byte cap (P6)
	if r.client.Emit(c.finished()) == rewrite.EmitNothing {
		// P7: the launch call completed at once (a background launch); a
		// client that shows updates of finished calls as new entries
		// would show this one as a second call.
		return v, nil
	}
	v.Send(pipe.Client, launchUpdate(rawSession, rawjson.Text(c.key.toolCallID), c))
	return v, nil
}

// launchUpdate is the tool_call_update the proxy adds for a launch call
// (L7): toolCallId, sessionUpdate and the snapshot, nothing the
// vendor did not say (no ACP status, P4). rawSession and rawID are JSON
// strings.
func launchUpdate(rawSession, rawID []byte, c *call) []byte {
	var b []byte
	b = append(b, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":`...)
	b = append(b, rawSession...)
	b = append(b, `,"update":{"toolCallId":`...)
	b = append(b, rawID...)
	b = append(b, `,"sessionUpdate":"tool_call_update","_meta":{"`+meta.Key+`":{"subagent":`...)
	b = c.snapshot().AppendJSON(b)
	return append(b, "}}}}}"...)
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

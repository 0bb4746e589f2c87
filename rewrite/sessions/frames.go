package sessions

import (
	"encoding/json"

	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/rewrite/meta"
)

// subagentUpdate is a standard subagent_update (Subagent Sessions): sent
// on the parent session, about the child sessionId; omitted members are
// unchanged on the client.
type subagentUpdate struct {
	SessionUpdate string          `json:"sessionUpdate"`
	SessionID     string          `json:"sessionId"`
	Title         string          `json:"title,omitempty"`
	Description   string          `json:"description,omitempty"`
	Capabilities  *capabilities   `json:"capabilities,omitempty"`
	State         *childState     `json:"state,omitempty"`
	Meta          json.RawMessage `json:"_meta,omitempty"`

	// For AIR's draft (J1, airSend): the prompt a spawn carries when
	// known, and the draft state of an end the standard has no word
	// for (disconnected).
	prompt, airState string
}

// capabilities are a child session's (only cancel exists).
type capabilities struct {
	Cancel *struct{} `json:"cancel,omitempty"`
}

// textBlock is a text content block.
type textBlock struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// sessionMessage is a standard session_message from one session to
// another.
type sessionMessage struct {
	SessionUpdate      string      `json:"sessionUpdate"`
	MessageID          string      `json:"messageId"`
	SenderSessionID    string      `json:"senderSessionId"`
	RecipientSessionID string      `json:"recipientSessionId"`
	Content            []textBlock `json:"content"`
}

// promptMessage is the launch prompt, from the parent to the child (S1,
// S4, S6); its id is "<child>:prompt" (the draft translation's).
func promptMessage(parent, child, prompt string) sessionMessage {
	return sessionMessage{SessionUpdate: "session_message", MessageID: child + ":prompt",
		SenderSessionID: parent, RecipientSessionID: child, Content: []textBlock{{"text", prompt}}}
}

// sessionUpdateFrame returns a session/update notification for sid.
func sessionUpdateFrame(sid string, update any) ([]byte, error) {
	return rewrite.Notification("session/update", struct {
		SessionID string `json:"sessionId"`
		Update    any    `json:"update"`
	}{sid, update})
}

// send appends the session/update of sid with update to frames; for
// JetBrains AIR with native child sessions, in its draft dialect (J1).
func (r *rewriter) send(frames *[][]byte, sid string, update any) {
	if r.air == airNative {
		r.airSend(frames, sid, update)
		return
	}
	b, err := sessionUpdateFrame(sid, update)
	if err != nil {
		r.log.Error("subagent session frame not built", "rule", "S4", "err", err)
		return
	}
	*frames = append(*frames, b)
}

// toolCallUpdate is a tool_call_update the module builds for a launch
// call: its snapshot and, to link a child, its content (no ACP status:
// nothing the vendor said is overridden, P4).
type toolCallUpdate struct {
	SessionUpdate string          `json:"sessionUpdate"`
	ToolCallID    string          `json:"toolCallId"`
	Status        string          `json:"status,omitempty"` // with content: the call's last vendor status (P7)
	Content       json.RawMessage `json:"content,omitempty"`
	Meta          json.RawMessage `json:"_meta,omitempty"`
}

// snapshotUpdate returns the tool_call_update that carries call cl's
// snapshot alone, on the session where the client sees the call (S6,
// S8).
// For AIR without native child sessions it is marked as every frame of
// a launch call is (J1).
func (r *rewriter) snapshotUpdate(cl *call, toolCallID string) ([]byte, error) {
	m := meta.Object(meta.SubagentMember, cl.raw)
	if r.air == airMarker {
		m = append(append(m[:len(m)-1:len(m)-1], `,"jetbrains":{"air":`...), append(airMarkerValue, '}', '}')...)
	}
	return sessionUpdateFrame(cl.session, toolCallUpdate{SessionUpdate: "tool_call_update", ToolCallID: toolCallID, Meta: m})
}

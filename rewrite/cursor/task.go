package cursor

import (
	"encoding/json"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/rewrite/meta"
)

// early is a cursor/task that arrived before its tool call (C4).
type early struct {
	session string
	info    taskInfo
}

// bytes returns the bytes e holds (P6).
func (e *early) bytes() int64 {
	t := &e.info
	return int64(len(e.session) + len(t.description) + len(t.prompt) + len(t.model) + len(t.agentID) +
		len(t.subagentType) + len(t.durationMs))
}

// task handles cursor/task (C1, C3, C4, C6): Cursor gets {} at once; what
// the request says goes into the call's snapshot, now when the tool call
// was seen (C3), else when it arrives (C4).
func (r *rewriter) task(f *rewrite.Frame) (rewrite.Verdict, error) {
	var v rewrite.Verdict
	v.DropFrame()
	if id := f.ID(); id != nil && !r.client.Handles(f.Method()) {
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
	c, ok := r.calls.Get(tcid)
	if !ok {
		// C4: held until the tool call arrives.
		r.early.Put(tcid, &early{session: r.attribute(params, ""), info: info})
		return v, nil
	}
	// C3: the tool call was already forwarded.
	c.task = true
	c.snap.applyTask(&info)
	c.markLaunched()
	r.calls.Resize(tcid)
	if c.session == "" {
		return v, nil
	}
	frames, err := r.lateUpdate(c, f.Method())
	if err != nil {
		return v, err
	}
	for _, b := range frames {
		v.Send(pipe.Client, b)
	}
	return v, nil
}

// lateUpdate returns the frames that show the client what a cursor/task
// added to a call it already has (C3): one tool_call_update with what the
// client still lacks and the snapshot (the sessions module adds the
// call's child session, S1).
//
// Rule P7: the update carries the call's last vendor status, so that no
// client reads it as running again; for a client that shows updates of
// finished calls as new entries there is none after the call finished,
// and for one that reprints them, or that handles cursor/task itself,
// it carries the snapshot alone.
func (r *rewriter) lateUpdate(c *call, method string) ([][]byte, error) {
	u := toolCallUpdate{SessionUpdate: "tool_call_update", ToolCallID: c.id, Status: c.vendorStatus}
	emit := r.client.Emit(rewrite.Finished(c.vendorStatus))
	if emit == rewrite.EmitAll && r.client.Handles(method) {
		emit = rewrite.EmitSnapshotOnly
	}
	full := emit == rewrite.EmitAll
	if full && !c.shown.title && c.snap.description != "" {
		u.Title = "Task: " + c.snap.description
		c.shown.title = true
	}
	if full && !c.shown.name {
		u.Name = c.snap.toolNameOr()
		c.shown.name = true
	}
	if full && !c.shown.content && c.snap.prompt != "" {
		u.Content = promptContent(c.snap.prompt)
		c.shown.content = true
	}
	if u.Title == "" && u.Name == "" && u.Content == nil {
		u.Status = "" // the snapshot alone changes nothing a client shows (P7 asks no status)
	}
	if emit == rewrite.EmitNothing {
		return nil, nil
	}
	u.Meta = meta.Object(meta.SubagentMember, c.snap.subagent().JSON())
	frame, err := sessionUpdateFrame(c.session, u)
	if err != nil {
		return nil, rewrite.RuleErrorf("C3", "%w", err)
	}
	return [][]byte{frame}, nil
}

// toolCallUpdate is a tool_call_update the proxy builds.
type toolCallUpdate struct {
	SessionUpdate string          `json:"sessionUpdate"`
	ToolCallID    string          `json:"toolCallId"`
	Status        string          `json:"status,omitempty"` // the call's last vendor status (P7)
	Title         string          `json:"title,omitempty"`
	Name          string          `json:"name,omitempty"`
	Content       json.RawMessage `json:"content,omitempty"`
	Meta          json.RawMessage `json:"_meta,omitempty"`
}

// promptContent returns a content array with the prompt as text.
func promptContent(prompt string) json.RawMessage {
	out := make([]byte, 0, rawjson.StringLen(prompt)+len(`[{"type":"content","content":{"type":"text","text":}}]`))
	out = append(out, `[{"type":"content","content":{"type":"text","text":`...)
	out = rawjson.AppendString(out, prompt)
	return append(out, '}', '}', ']')
}

package cursor

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strings"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/rewrite/meta"
)

// parseTodos returns the todo objects of a todos array (other elements
// are skipped); ok is false when raw is present and not an array.
func parseTodos(raw []byte) (todos [][]byte, ok bool) {
	if raw == nil || bytes.Equal(raw, []byte("null")) {
		return nil, true
	}
	if rawjson.FirstByte(raw) != '[' {
		return nil, false
	}
	err := rawjson.Elements(raw, func(el []byte) bool {
		if rawjson.FirstByte(el) == '{' && json.Valid(el) {
			todos = append(todos, bytes.Clone(el))
		}
		return true
	})
	return todos, err == nil
}

// mergeTodos merges changed items into list by id (C8): an item with a
// known id updates that item's members (the last item with that id, when
// the list repeats one), any other item is appended. The ids are indexed
// once, so a merge costs time linear in the sizes of both lists.
func mergeTodos(list, changed [][]byte) [][]byte {
	out := append([][]byte(nil), list...)
	last := make(map[string]int, len(out)) // id -> index of its last item
	for i, old := range out {
		if id := todoID(old); id != "" {
			last[id] = i
		}
	}
	for _, it := range changed {
		id := todoID(it)
		idx, known := last[id]
		if id == "" || !known {
			out = append(out, it)
			if id != "" {
				last[id] = len(out) - 1
			}
			continue
		}
		out[idx] = mergeTodo(out[idx], it)
	}
	return out
}

// mergeTodo sets every member of the todo it on old: the members it names
// are replaced, the others kept (a member whose key or value does not
// parse is skipped).
func mergeTodo(old, it []byte) []byte {
	merged := old
	_ = rawjson.Members(it, func(m rawjson.Member) bool {
		key, ok := rawjson.UnescapeKey(m.Key)
		if !ok {
			return true
		}
		if b, err := rawjson.Set(merged, m.Value, key); err == nil {
			merged = b
		}
		return true
	})
	return merged
}

// todoID returns a key for the id of a todo: the same for equal JSON
// values (a string is compared decoded, any other value compacted, so
// numeric ids merge too), "" when the todo has no usable id.
func todoID(todo []byte) string {
	v, ok := rawjson.Lookup(todo, "id")
	if !ok || string(v) == "null" || (rawjson.FirstByte(v) == '"' && str(v) == "") {
		return ""
	}
	if rawjson.FirstByte(v) == '"' {
		return "s" + str(v)
	}
	var b bytes.Buffer
	if json.Compact(&b, v) != nil {
		return ""
	}
	return "v" + b.String()
}

// planEntry is a standard ACP plan entry.
type planEntry struct {
	Content  string `json:"content"`
	Priority string `json:"priority"`
	Status   string `json:"status"`
}

// planUpdate returns the standard plan update for a todo list (C8):
// cancelled items (and items without content or with an unknown status)
// are left out of entries; the whole list is in the _meta.
func planUpdate(sid string, list [][]byte) ([]byte, error) {
	entries := []planEntry{}
	for _, it := range list {
		content := strAt(it, "content")
		status := strAt(it, "status")
		switch status {
		case "pending", "in_progress", "completed":
		default:
			continue
		}
		if content == "" {
			continue
		}
		entries = append(entries, planEntry{Content: content, Priority: "medium", Status: status})
	}
	return sessionUpdateFrame(sid, struct {
		SessionUpdate string          `json:"sessionUpdate"`
		Entries       []planEntry     `json:"entries"`
		Meta          json.RawMessage `json:"_meta"`
	}{"plan", entries, meta.Object("todos", rawArray(list))})
}

// updateTodos handles cursor/update_todos (C8).
func (r *rewriter) updateTodos(f *rewrite.Frame) (rewrite.Verdict, error) {
	var v rewrite.Verdict
	v.DropFrame()
	params, _ := f.Lookup("params")
	raw, _ := rawjson.Lookup(params, "todos")
	items, ok := parseTodos(raw)
	if !ok {
		r.oddity("C8", "cursor/update_todos: todos is not an array; answered rejected")
		return v, sendReply(&v, "C8", f.ID(), outcome{Outcome: "rejected", Reason: "todos must be an array"})
	}
	sid := r.attribute(params, strAt(params, "toolCallId"))
	list, _ := r.todos.Get(sid)
	switch m, _ := rawjson.Lookup(params, "merge"); {
	case raw == nil || string(raw) == "null":
		// Nothing to change: the reply and the plan show the list held.
	case string(m) == "true":
		list = mergeTodos(list, items)
	default:
		list = items
	}
	r.putTodos(sid, list)
	if err := sendReply(&v, "C8", f.ID(), outcome{Outcome: "accepted", Todos: rawArray(list)}); err != nil {
		return v, err
	}
	if sid == "" {
		r.oddity("C14", "cursor/update_todos: no session to show the plan in")
		return v, nil
	}
	plan, err := planUpdate(sid, list)
	if err != nil {
		return v, rewrite.RuleErrorf("C8", "plan update: %w", err)
	}
	v.Send(pipe.Client, plan)
	return v, nil
}

func (r *rewriter) putTodos(sid string, list [][]byte) {
	r.todos.Put(sid, list)
}

// permissionOption is a standard permission option.
type permissionOption struct {
	OptionID string `json:"optionId"`
	Name     string `json:"name"`
	Kind     string `json:"kind"`
}

// permissionParams are session/request_permission params.
type permissionParams struct {
	SessionID string             `json:"sessionId"`
	ToolCall  permissionToolCall `json:"toolCall"`
	Options   []permissionOption `json:"options"`
}

type permissionToolCall struct {
	ToolCallID string          `json:"toolCallId"`
	Status     string          `json:"status,omitempty"` // the call's last vendor status (P7)
	Title      string          `json:"title,omitempty"`
	Content    json.RawMessage `json:"content,omitempty"`
}

// createPlan handles cursor/create_plan (C9).
func (r *rewriter) createPlan(f *rewrite.Frame) (rewrite.Verdict, error) {
	var v rewrite.Verdict
	v.DropFrame()
	params, _ := f.Lookup("params")
	tcid := strAt(params, "toolCallId")
	sid := r.attribute(params, tcid)
	raw, _ := rawjson.Lookup(params, "todos")
	items, ok := parseTodos(raw)
	if ok && raw != nil && sid != "" {
		r.putTodos(sid, items)
		plan, err := planUpdate(sid, items)
		if err != nil {
			return v, rewrite.RuleErrorf("C9", "plan update: %w", err)
		}
		v.Send(pipe.Client, plan)
	}
	id := f.ID()
	if id == nil {
		return v, nil // nobody waits for an answer
	}
	if sid == "" || tcid == "" {
		r.oddity("C9", "cursor/create_plan cannot be shown to the client; answered cancelled", "session", sid, "toolCallId", tcid)
		return v, sendReply(&v, "C9", id, outcome{Outcome: "cancelled"})
	}
	title := "Create Plan"
	if name := strAt(params, "name"); name != "" {
		title += ": " + name
	}
	tc := permissionToolCall{ToolCallID: tcid, Title: title, Status: r.lastStatus(tcid)}
	if text := strAt(params, "plan"); text != "" {
		tc.Content = promptContent(text)
	}
	req, err := rawjson.Marshal(permissionParams{
		SessionID: sid,
		ToolCall:  tc,
		Options: []permissionOption{
			{OptionID: "accept", Name: "Accept plan", Kind: "allow_once"},
			{OptionID: "reject", Name: "Reject plan", Kind: "reject_once"},
		},
	})
	if err != nil {
		return v, rewrite.RuleErrorf("C9", "permission request: %w", err)
	}
	r.ask(&v, &pending{kind: kindPlan, cursorID: bytes.Clone(id), session: sid}, "session/request_permission", req)
	return v, nil
}

// generateImage handles cursor/generate_image (C11).
func (r *rewriter) generateImage(f *rewrite.Frame) (rewrite.Verdict, error) {
	var v rewrite.Verdict
	v.DropFrame()
	params, _ := f.Lookup("params")
	tcid := strAt(params, "toolCallId")
	o := outcome{Outcome: "rejected", Reason: "the client cannot generate images"}
	if fp := strAt(params, "filePath"); fp != "" {
		o = outcome{Outcome: "generated", File: fp}
	}
	if err := sendReply(&v, "C11", f.ID(), o); err != nil {
		return v, err
	}
	data := strAt(params, "imageData")
	if data == "" || tcid == "" {
		return v, nil
	}
	sid := r.attribute(params, tcid)
	mime := strAt(params, "mimeType")
	if mime == "" {
		mime = sniffImage(data)
	}
	if sid == "" || mime == "" {
		r.log.Debug("cursor/generate_image: image not shown", "rule", "C11", "session", sid, "mimeType", mime)
		return v, nil
	}
	type image struct {
		Type     string `json:"type"`
		Data     string `json:"data"`
		MimeType string `json:"mimeType"`
	}
	type block struct {
		Type    string `json:"type"`
		Content image  `json:"content"`
	}
	content, err := rawjson.Marshal([]block{{"content", image{"image", data, mime}}})
	if err != nil {
		return v, rewrite.RuleErrorf("C11", "image content: %w", err)
	}
	frame, err := sessionUpdateFrame(sid, toolCallUpdate{SessionUpdate: "tool_call_update", ToolCallID: tcid,
		Content: content, Status: r.lastStatus(tcid)})
	if err != nil {
		return v, rewrite.RuleErrorf("C11", "%w", err)
	}
	v.Send(pipe.Client, frame)
	return v, nil
}

// sniffImage returns the MIME type of base64 image data, or "" when the
// data is none of PNG, JPEG, GIF or WebP (no type is guessed, P4).
func sniffImage(data string) string {
	for _, p := range []struct{ prefix, mime string }{
		{"iVBORw0KGgo", "image/png"},
		{"/9j/", "image/jpeg"},
		{"R0lGOD", "image/gif"},
	} {
		if strings.HasPrefix(data, p.prefix) {
			return p.mime
		}
	}
	// WebP: "RIFF", a 4-byte size, "WEBP" (12 bytes, 16 base64 chars).
	if len(data) >= 16 {
		if b, err := base64.StdEncoding.DecodeString(data[:16]); err == nil && len(b) >= 12 &&
			string(b[:4]) == "RIFF" && string(b[8:12]) == "WEBP" {
			return "image/webp"
		}
	}
	return ""
}

package fakemodel

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
)

// Responses serves the OpenAI Responses API (POST <base>/responses,
// "stream": true) as Codex calls it with wire_api = "responses". Script
// decides every answer from the decoded request; the answer is streamed as
// response.created, one response.output_item.done per item (message text,
// function calls, tool_search calls) and response.completed.
type Responses struct {
	Script func(ResponsesRequest) ResponsesTurn
	// seq numbers the responses so ids are unique and deterministic.
	seq atomic.Uint64
}

// ResponsesRequest is what a script sees of one request.
type ResponsesRequest struct {
	Model string
	// Input is the conversation: messages, calls and call outputs.
	Input []ResponsesItem
	// Tools names the tools offered, top-level and in additional_tools
	// input items; a namespaced function is "<namespace>.<name>".
	Tools []string
}

// ResponsesItem is one input item.
type ResponsesItem struct {
	Type      string          `json:"type"`
	Role      string          `json:"role,omitempty"`
	Content   json.RawMessage `json:"content,omitempty"`
	CallID    string          `json:"call_id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Namespace string          `json:"namespace,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Output    json.RawMessage `json:"output,omitempty"`
	Tools     json.RawMessage `json:"tools,omitempty"`
}

// ResponsesTurn is the model's next turn: text, calls, or both.
type ResponsesTurn struct {
	Text  string
	Calls []ResponsesCall
}

// ResponsesCall is one call of the model. A call with ToolSearch set is a
// client-executed tool_search call (Arguments is the search); otherwise a
// function call, Namespace set for a namespaced tool.
type ResponsesCall struct {
	CallID     string
	Name       string
	Namespace  string
	ToolSearch bool
	Arguments  map[string]any
}

// HasTool reports whether the request offers the tool ("ns.name" for a
// namespaced function).
func (r ResponsesRequest) HasTool(name string) bool {
	for _, t := range r.Tools {
		if t == name {
			return true
		}
	}
	return false
}

// ToolNamespace returns the namespace that offers the function name, "" for
// a top-level tool, and whether it is offered at all.
func (r ResponsesRequest) ToolNamespace(name string) (string, bool) {
	for _, t := range r.Tools {
		ns, n, ok := strings.Cut(t, ".")
		if !ok {
			ns, n = "", t
		}
		if n == name {
			return ns, true
		}
	}
	return "", false
}

// Output returns the output item answering callID (type *_output).
func (r ResponsesRequest) Output(callID string) (ResponsesItem, bool) {
	for _, it := range r.Input {
		if it.CallID == callID && strings.HasSuffix(it.Type, "_output") {
			return it, true
		}
	}
	return ResponsesItem{}, false
}

// UserTexts returns the text of every user message, in order.
func (r ResponsesRequest) UserTexts() []string {
	var out []string
	for _, it := range r.Input {
		if it.Type == "message" && it.Role == "user" {
			out = append(out, it.Text())
		}
	}
	return out
}

// LastCallOutput returns the last function/tool output item of the input.
func (r ResponsesRequest) LastCallOutput() (ResponsesItem, bool) {
	for i := len(r.Input) - 1; i >= 0; i-- {
		if strings.HasSuffix(r.Input[i].Type, "_output") {
			return r.Input[i], true
		}
		if r.Input[i].Type == "message" && r.Input[i].Role == "user" {
			return ResponsesItem{}, false
		}
	}
	return ResponsesItem{}, false
}

// Text returns the concatenated text of a message item's content (or the
// output text of a call output).
func (it ResponsesItem) Text() string {
	raw := it.Content
	if len(raw) == 0 {
		raw = it.Output
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

type responsesTool struct {
	Type  string          `json:"type"`
	Name  string          `json:"name"`
	Tools []responsesTool `json:"tools"`
}

func toolNames(prefix string, tools []responsesTool, out []string) []string {
	for _, t := range tools {
		switch {
		case t.Type == "namespace":
			out = toolNames(t.Name+".", t.Tools, out)
		case t.Name != "":
			out = append(out, prefix+t.Name)
		default:
			out = append(out, prefix+t.Type) // tool_search, web_search
		}
	}
	return out
}

// ParseResponsesRequest decodes a Responses API request body.
func ParseResponsesRequest(body []byte) (ResponsesRequest, error) {
	var wire struct {
		Model string          `json:"model"`
		Input []ResponsesItem `json:"input"`
		Tools []responsesTool `json:"tools"`
	}
	if err := json.Unmarshal(body, &wire); err != nil {
		return ResponsesRequest{}, fmt.Errorf("responses: decoding request: %w", err)
	}
	req := ResponsesRequest{Model: wire.Model, Input: wire.Input}
	req.Tools = toolNames("", wire.Tools, nil)
	for _, it := range wire.Input {
		if it.Type != "additional_tools" && it.Type != "tool_search_output" {
			continue
		}
		var more []responsesTool
		if err := json.Unmarshal(it.Tools, &more); err != nil {
			return ResponsesRequest{}, fmt.Errorf("responses: decoding %s tools: %w", it.Type, err)
		}
		req.Tools = toolNames("", more, req.Tools)
	}
	return req, nil
}

// ResponsesEvents returns the SSE events (each "event: T\ndata: JSON\n\n")
// that stream turn as response id.
func ResponsesEvents(id string, turn ResponsesTurn) ([]byte, error) {
	var out []byte
	add := func(typ string, fields map[string]any) error {
		fields["type"] = typ
		data, err := json.Marshal(fields)
		if err != nil {
			return fmt.Errorf("responses: encoding %s: %w", typ, err)
		}
		out = fmt.Appendf(out, "event: %s\ndata: %s\n\n", typ, data)
		return nil
	}
	if err := add("response.created", map[string]any{"response": map[string]any{"id": id}}); err != nil {
		return nil, err
	}
	var items []map[string]any
	if turn.Text != "" {
		items = append(items, map[string]any{
			"type": "message", "role": "assistant", "id": id + "_msg", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": turn.Text, "annotations": []any{}}},
		})
	}
	for _, c := range turn.Calls {
		args := c.Arguments
		if args == nil {
			args = map[string]any{}
		}
		if c.ToolSearch {
			items = append(items, map[string]any{
				"type": "tool_search_call", "call_id": c.CallID, "execution": "client",
				"status": "completed", "arguments": args,
			})
			continue
		}
		encoded, err := json.Marshal(args)
		if err != nil {
			return nil, fmt.Errorf("responses: encoding arguments of %s: %w", c.Name, err)
		}
		item := map[string]any{
			"type": "function_call", "id": "fc_" + c.CallID, "call_id": c.CallID, "name": c.Name,
			"arguments": string(encoded), "status": "completed",
		}
		if c.Namespace != "" {
			item["namespace"] = c.Namespace
		}
		items = append(items, item)
	}
	for i, item := range items {
		if err := add("response.output_item.done", map[string]any{"output_index": i, "item": item}); err != nil {
			return nil, err
		}
	}
	usage := map[string]any{
		"input_tokens": 10, "input_tokens_details": map[string]any{"cached_tokens": 0},
		"output_tokens": 5, "output_tokens_details": map[string]any{"reasoning_tokens": 0},
		"total_tokens": 15,
	}
	if err := add("response.completed", map[string]any{"response": map[string]any{"id": id, "usage": usage}}); err != nil {
		return nil, err
	}
	return out, nil
}

// ServeHTTP answers one POST .../responses request.
func (s *Responses) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/responses") {
		http.NotFound(w, r)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	req, err := ParseResponsesRequest(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	events, err := ResponsesEvents(fmt.Sprintf("resp_%d", s.seq.Add(1)), s.Script(req))
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	_, _ = w.Write(events)
}

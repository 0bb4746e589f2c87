package fakemodel

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// OpenAI Responses API (POST /v1/responses, "stream": true), as Codex
// calls it with wire_api = "responses".
//
// Codex offers some tools in namespaces (top-level {"type":"namespace"}
// entries, "additional_tools" input items, and the tools a client-executed
// tool_search returns in "tool_search_output" items). A namespaced
// function is "<namespace>.<name>" in Request.Tools and in the ToolCall a
// scenario returns; it goes out as a function_call with that namespace. A
// ToolCall named "tool_search" goes out as a tool_search_call (execution
// "client") when the request offers tool_search as a tool type.

type responsesRequest struct {
	Model        string          `json:"model"`
	Instructions string          `json:"instructions"`
	Input        []responsesItem `json:"input"`
	Tools        []responsesTool `json:"tools"`
	Stream       bool            `json:"stream"`
}

type responsesItem struct {
	Type      string          `json:"type"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Namespace string          `json:"namespace"`
	Arguments json.RawMessage `json:"arguments"`
	Output    json.RawMessage `json:"output"`
	Tools     json.RawMessage `json:"tools"`
}

type responsesTool struct {
	Type  string          `json:"type"`
	Name  string          `json:"name"`
	Tools []responsesTool `json:"tools"`
}

// responsesToolSearch is the name of Codex's tool-discovery tool, offered
// as a tool type rather than a function.
const responsesToolSearch = "tool_search"

// responsesToolNames appends the names of tools (namespaced as
// "<namespace>.<name>"; a typed tool without a name, such as tool_search
// or web_search, by its type).
func responsesToolNames(out []string, prefix string, tools []responsesTool) []string {
	for _, t := range tools {
		switch {
		case t.Type == "namespace":
			out = responsesToolNames(out, t.Name+".", t.Tools)
		case t.Name != "":
			out = append(out, prefix+t.Name)
		default:
			out = append(out, prefix+t.Type)
		}
	}
	return out
}

// decodeResponses turns a Responses request body into a Request. Developer
// and system messages (and "instructions") make up Request.System; calls
// in the input join the assistant message before them.
func decodeResponses(body []byte) (*Request, error) {
	var rr responsesRequest
	if err := json.Unmarshal(body, &rr); err != nil {
		return nil, fmt.Errorf("responses request: %w", err)
	}
	req := &Request{API: "responses", Model: rr.Model, Stream: rr.Stream}
	req.Tools = responsesToolNames(nil, "", rr.Tools)
	var system []string
	if rr.Instructions != "" {
		system = append(system, rr.Instructions)
	}
	assistant := func() *Message {
		if n := len(req.Messages); n > 0 && req.Messages[n-1].Role == "assistant" {
			return &req.Messages[n-1]
		}
		req.Messages = append(req.Messages, Message{Role: "assistant"})
		return &req.Messages[len(req.Messages)-1]
	}
	for i, it := range rr.Input {
		switch it.Type {
		case "message":
			text, err := responsesText(it.Content)
			if err != nil {
				return nil, fmt.Errorf("responses input %d: %w", i, err)
			}
			switch it.Role {
			case "developer", "system":
				system = append(system, text)
			case "assistant":
				m := assistant()
				m.Text = strings.Join(nonEmpty(m.Text, text), "\n")
			default:
				req.Messages = append(req.Messages, Message{Role: it.Role, Text: text})
			}
		case "function_call", "custom_tool_call":
			name := it.Name
			if it.Namespace != "" {
				name = it.Namespace + "." + name
			}
			args := it.Arguments
			var s string
			if json.Unmarshal(args, &s) == nil { // function_call arguments are a JSON string
				args = json.RawMessage(s)
			}
			m := assistant()
			m.ToolCalls = append(m.ToolCalls, ToolCall{ID: it.CallID, Name: name, Args: args})
		case "tool_search_call":
			m := assistant()
			m.ToolCalls = append(m.ToolCalls, ToolCall{ID: it.CallID, Name: responsesToolSearch, Args: it.Arguments})
		case "function_call_output", "custom_tool_call_output":
			text, err := responsesText(it.Output)
			if err != nil {
				return nil, fmt.Errorf("responses input %d: %w", i, err)
			}
			req.Messages = append(req.Messages, Message{Role: "tool", ToolResults: []ToolResult{{ID: it.CallID, Text: text}}})
		case "tool_search_output":
			var found []responsesTool
			if err := json.Unmarshal(it.Tools, &found); err != nil {
				return nil, fmt.Errorf("responses input %d: tool_search_output tools: %w", i, err)
			}
			names := responsesToolNames(nil, "", found)
			req.Tools = append(req.Tools, names...)
			req.Messages = append(req.Messages, Message{Role: "tool", ToolResults: []ToolResult{{ID: it.CallID, Text: strings.Join(names, "\n")}}})
		case "additional_tools":
			var more []responsesTool
			if err := json.Unmarshal(it.Tools, &more); err != nil {
				return nil, fmt.Errorf("responses input %d: additional_tools: %w", i, err)
			}
			req.Tools = responsesToolNames(req.Tools, "", more)
		}
	}
	req.System = strings.Join(system, "\n")
	return req, nil
}

func nonEmpty(texts ...string) []string {
	var out []string
	for _, t := range texts {
		if t != "" {
			out = append(out, t)
		}
	}
	return out
}

// responsesText reads a content or output value: null, a string or a list
// of parts with text.
func responsesText(raw json.RawMessage) (string, error) {
	return partsText(raw, func(p textPart) bool { return p.Text != "" })
}

func (s *Server) responses(w http.ResponseWriter, r *http.Request) {
	req, turn, ok := s.request(w, r, decodeResponses, "call_fake_")
	if !ok {
		return
	}
	id := s.nextID("resp_fake_")
	items := responsesItems(id, req, turn)
	if !req.Stream {
		writeJSON(w, http.StatusOK, responsesObject(id, req.Model, "completed", items))
		return
	}
	sse := newSSE(w)
	sse.event("response.created", map[string]any{"type": "response.created", "sequence_number": 0,
		"response": responsesObject(id, req.Model, "in_progress", []any{})})
	for i, item := range items {
		sse.event("response.output_item.done", map[string]any{"type": "response.output_item.done",
			"sequence_number": i + 1, "output_index": i, "item": item})
	}
	sse.event("response.completed", map[string]any{"type": "response.completed", "sequence_number": len(items) + 1,
		"response": responsesObject(id, req.Model, "completed", items)})
}

// responsesItems are the output items of turn: the message, then the calls.
func responsesItems(id string, req *Request, t Turn) []any {
	items := []any{}
	if t.Text != "" {
		items = append(items, map[string]any{
			"type": "message", "id": "msg_" + id, "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": t.Text, "annotations": []any{}}},
		})
	}
	for _, c := range t.ToolCalls {
		if c.Name == responsesToolSearch && req.HasTool(responsesToolSearch) {
			items = append(items, map[string]any{"type": "tool_search_call", "call_id": c.ID,
				"execution": "client", "status": "completed", "arguments": argsOrEmpty(c.Args)})
			continue
		}
		item := map[string]any{"type": "function_call", "id": "fc_" + c.ID, "call_id": c.ID,
			"status": "completed", "arguments": string(argsOrEmpty(c.Args))}
		if ns, name, ok := strings.Cut(c.Name, "."); ok {
			item["namespace"], item["name"] = ns, name
		} else {
			item["name"] = c.Name
		}
		items = append(items, item)
	}
	return items
}

// responsesObject is a response object with fixed usage.
func responsesObject(id, model, status string, output []any) map[string]any {
	obj := map[string]any{"id": id, "object": "response", "created_at": fakeCreated, "status": status,
		"model": model, "output": output}
	if status == "completed" {
		obj["usage"] = map[string]any{
			"input_tokens": fakeInputTokens, "input_tokens_details": map[string]any{"cached_tokens": 0},
			"output_tokens": fakeOutputTokens, "output_tokens_details": map[string]any{"reasoning_tokens": 0},
			"total_tokens": fakeInputTokens + fakeOutputTokens,
		}
	}
	return obj
}

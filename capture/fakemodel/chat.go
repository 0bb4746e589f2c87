package fakemodel

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// OpenAI Chat Completions (POST /v1/chat/completions), as Qwen Code and
// OpenCode (through @ai-sdk/openai-compatible) call it.

type chatRequest struct {
	Model    string        `json:"model"`
	Messages []chatMessage `json:"messages"`
	Tools    []struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
	Stream        bool `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

type chatMessage struct {
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	ToolCalls []struct {
		ID       string `json:"id"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
	ToolCallID string `json:"tool_call_id"`
}

// decodeChat turns a Chat Completions request body into a Request. System
// (and developer) messages make up Request.System.
func decodeChat(body []byte) (*Request, bool, error) {
	var cr chatRequest
	if err := json.Unmarshal(body, &cr); err != nil {
		return nil, false, fmt.Errorf("chat request: %w", err)
	}
	req := &Request{API: "chat", Model: cr.Model, Stream: cr.Stream}
	for _, t := range cr.Tools {
		req.Tools = append(req.Tools, t.Function.Name)
	}
	var system []string
	for i, m := range cr.Messages {
		text, err := chatContent(m.Content)
		if err != nil {
			return nil, false, fmt.Errorf("chat message %d: %w", i, err)
		}
		switch m.Role {
		case "system", "developer":
			system = append(system, text)
			continue
		case "tool":
			req.Messages = append(req.Messages, Message{Role: "tool", ToolResults: []ToolResult{{ID: m.ToolCallID, Text: text}}})
			continue
		}
		msg := Message{Role: m.Role, Text: text}
		for _, c := range m.ToolCalls {
			msg.ToolCalls = append(msg.ToolCalls, ToolCall{ID: c.ID, Name: c.Function.Name, Args: json.RawMessage(c.Function.Arguments)})
		}
		req.Messages = append(req.Messages, msg)
	}
	req.System = strings.Join(system, "\n")
	includeUsage := cr.StreamOptions != nil && cr.StreamOptions.IncludeUsage
	return req, includeUsage, nil
}

// chatContent reads a content value: null, a string or a list of parts,
// of which the "text" ones count.
func chatContent(raw json.RawMessage) (string, error) {
	return partsText(raw, func(p textPart) bool { return p.Type == "text" })
}

// textPart is one part of a content value that is a list.
type textPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// partsText reads a content value: null, a string, or a list of parts
// whose texts it joins with newlines, the parts keep accepts.
func partsText(raw json.RawMessage, keep func(textPart) bool) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var parts []textPart
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", err
	}
	var texts []string
	for _, p := range parts {
		if keep(p) {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n"), nil
}

func (s *Server) chatCompletions(w http.ResponseWriter, r *http.Request) {
	var includeUsage bool
	decode := func(body []byte) (req *Request, err error) {
		req, includeUsage, err = decodeChat(body)
		return req, err
	}
	req, turn, ok := s.request(w, r, decode, "call_fake_")
	if !ok {
		return
	}
	id := s.nextID("chatcmpl-fake-")
	if req.Stream {
		writeChatStream(newSSE(w), id, req.Model, turn, includeUsage)
		return
	}
	writeJSON(w, http.StatusOK, chatCompletion(id, req.Model, turn))
}

// chatModels lists one model, for agents that check the model list.
func (s *Server) chatModels(w http.ResponseWriter, r *http.Request) {
	s.logRequest(r, nil, "models")
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": []any{
		map[string]any{"id": "fake-model", "object": "model", "created": fakeCreated, "owned_by": "fakemodel"},
	}})
}

// fakeCreated is the fixed "created" time of every response.
const fakeCreated = 1764547200

var chatUsage = map[string]any{"prompt_tokens": fakeInputTokens, "completion_tokens": fakeOutputTokens, "total_tokens": fakeInputTokens + fakeOutputTokens}

func chatFinishReason(t Turn) string {
	if len(t.ToolCalls) > 0 {
		return "tool_calls"
	}
	return "stop"
}

func chatToolCalls(t Turn, withIndex bool) []any {
	calls := make([]any, 0, len(t.ToolCalls))
	for i, c := range t.ToolCalls {
		call := map[string]any{"id": c.ID, "type": "function",
			"function": map[string]any{"name": c.Name, "arguments": string(argsOrEmpty(c.Args))}}
		if withIndex {
			call["index"] = i
		}
		calls = append(calls, call)
	}
	return calls
}

// chatCompletion is the non-streaming response.
func chatCompletion(id, model string, t Turn) map[string]any {
	msg := map[string]any{"role": "assistant", "content": nil}
	if t.Text != "" {
		msg["content"] = t.Text
	}
	if len(t.ToolCalls) > 0 {
		msg["tool_calls"] = chatToolCalls(t, false)
	}
	return map[string]any{"id": id, "object": "chat.completion", "created": fakeCreated, "model": model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": chatFinishReason(t)}},
		"usage":   chatUsage}
}

// writeChatStream writes the turn as chat.completion.chunk events: the
// role, the text, each tool call whole, the finish reason, the usage when
// asked for, then [DONE].
func writeChatStream(sse *sseWriter, id, model string, t Turn, includeUsage bool) {
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{"id": id, "object": "chat.completion.chunk", "created": fakeCreated, "model": model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
	}
	sse.event("", chunk(map[string]any{"role": "assistant", "content": ""}, nil))
	if t.Text != "" {
		sse.event("", chunk(map[string]any{"content": t.Text}, nil))
	}
	for _, c := range chatToolCalls(t, true) {
		sse.event("", chunk(map[string]any{"tool_calls": []any{c}}, nil))
	}
	sse.event("", chunk(map[string]any{}, chatFinishReason(t)))
	if includeUsage {
		sse.event("", map[string]any{"id": id, "object": "chat.completion.chunk", "created": fakeCreated, "model": model,
			"choices": []any{}, "usage": chatUsage})
	}
	sse.rawEvent("", "[DONE]")
}

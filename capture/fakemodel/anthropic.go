package fakemodel

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// Anthropic Messages API (POST /v1/messages), as Claude Code calls it.

type anthropicRequest struct {
	Model    string             `json:"model"`
	System   json.RawMessage    `json:"system"`
	Messages []anthropicMessage `json:"messages"`
	Tools    []struct {
		Name string `json:"name"`
	} `json:"tools"`
	Stream bool `json:"stream"`
}

type anthropicMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

type anthropicBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
}

// decodeAnthropic turns a Messages request body into a Request.
func decodeAnthropic(body []byte) (*Request, error) {
	var ar anthropicRequest
	if err := json.Unmarshal(body, &ar); err != nil {
		return nil, fmt.Errorf("anthropic request: %w", err)
	}
	req := &Request{API: "anthropic", Model: ar.Model, Stream: ar.Stream}
	sys, _, _, err := anthropicContent(ar.System)
	if err != nil {
		return nil, fmt.Errorf("anthropic system: %w", err)
	}
	req.System = sys
	for _, t := range ar.Tools {
		req.Tools = append(req.Tools, t.Name)
	}
	for i, m := range ar.Messages {
		text, calls, results, err := anthropicContent(m.Content)
		if err != nil {
			return nil, fmt.Errorf("anthropic message %d: %w", i, err)
		}
		req.Messages = append(req.Messages, Message{Role: m.Role, Text: text, ToolCalls: calls, ToolResults: results})
	}
	return req, nil
}

// anthropicContent reads a content value: a string or a list of blocks.
func anthropicContent(raw json.RawMessage) (string, []ToolCall, []ToolResult, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil, nil, nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil, nil, nil
	}
	var blocks []anthropicBlock
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return "", nil, nil, err
	}
	var texts []string
	var calls []ToolCall
	var results []ToolResult
	for _, b := range blocks {
		switch b.Type {
		case "text":
			texts = append(texts, b.Text)
		case "tool_use":
			calls = append(calls, ToolCall{ID: b.ID, Name: b.Name, Args: b.Input})
		case "tool_result":
			text, _, _, err := anthropicContent(b.Content)
			if err != nil {
				return "", nil, nil, err
			}
			results = append(results, ToolResult{ID: b.ToolUseID, Text: text})
		}
	}
	return strings.Join(texts, "\n"), calls, results, nil
}

func (s *Server) anthropicMessages(w http.ResponseWriter, r *http.Request) {
	req, turn, ok := s.request(w, r, decodeAnthropic, "toolu_01Fake")
	if !ok {
		return
	}
	msgID := s.nextID("msg_01Fake")
	if req.Stream {
		writeAnthropicStream(newSSE(w), msgID, req.Model, turn)
		return
	}
	writeJSON(w, http.StatusOK, anthropicMessage1(msgID, req.Model, turn))
}

// anthropicCountTokens answers the token-counting endpoint with a fixed
// small count.
func (s *Server) anthropicCountTokens(w http.ResponseWriter, r *http.Request) {
	body, ok := s.readBody(w, r)
	if !ok {
		return
	}
	s.logRequest(r, body, "count-tokens")
	writeJSON(w, http.StatusOK, map[string]any{"input_tokens": fakeInputTokens})
}

// Fixed token counts: recordings must not depend on prompt sizes.
const (
	fakeInputTokens  = 100
	fakeOutputTokens = 20
)

func anthropicStopReason(t Turn) string {
	if len(t.ToolCalls) > 0 {
		return "tool_use"
	}
	return "end_turn"
}

func anthropicBlocks(t Turn) []any {
	var blocks []any
	if t.Text != "" {
		blocks = append(blocks, map[string]any{"type": "text", "text": t.Text})
	}
	for _, c := range t.ToolCalls {
		blocks = append(blocks, map[string]any{"type": "tool_use", "id": c.ID, "name": c.Name, "input": argsOrEmpty(c.Args)})
	}
	if blocks == nil {
		blocks = []any{}
	}
	return blocks
}

// anthropicMessage1 is the non-streaming response.
func anthropicMessage1(id, model string, t Turn) map[string]any {
	return map[string]any{
		"id": id, "type": "message", "role": "assistant", "model": model,
		"content": anthropicBlocks(t), "stop_reason": anthropicStopReason(t), "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": fakeInputTokens, "output_tokens": fakeOutputTokens},
	}
}

// writeAnthropicStream writes the turn as Messages stream events.
func writeAnthropicStream(sse *sseWriter, id, model string, t Turn) {
	sse.event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": id, "type": "message", "role": "assistant", "model": model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": fakeInputTokens, "output_tokens": 1},
	}})
	index := 0
	if t.Text != "" {
		sse.event("content_block_start", map[string]any{"type": "content_block_start", "index": index,
			"content_block": map[string]any{"type": "text", "text": ""}})
		sse.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": index,
			"delta": map[string]any{"type": "text_delta", "text": t.Text}})
		sse.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": index})
		index++
	}
	for _, c := range t.ToolCalls {
		sse.event("content_block_start", map[string]any{"type": "content_block_start", "index": index,
			"content_block": map[string]any{"type": "tool_use", "id": c.ID, "name": c.Name, "input": map[string]any{}}})
		sse.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": index,
			"delta": map[string]any{"type": "input_json_delta", "partial_json": string(argsOrEmpty(c.Args))}})
		sse.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": index})
		index++
	}
	sse.event("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": anthropicStopReason(t), "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": fakeOutputTokens}})
	sse.event("message_stop", map[string]any{"type": "message_stop"})
}

// argsOrEmpty is a tool call's arguments, {} when it has none.
func argsOrEmpty(args json.RawMessage) json.RawMessage {
	if len(args) == 0 {
		return json.RawMessage("{}")
	}
	return args
}

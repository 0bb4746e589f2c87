package fakemodel

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// Gemini API as Gemini CLI calls it when GOOGLE_GEMINI_BASE_URL points
// here: POST /v1beta/models/<model>:streamGenerateContent?alt=sse for the
// agent's turns (one SSE event per response chunk) and
// :generateContent (plain JSON) for side requests such as the model
// router's.

type geminiRequest struct {
	Contents          []geminiContent `json:"contents"`
	SystemInstruction *geminiContent  `json:"systemInstruction"`
	Tools             []struct {
		FunctionDeclarations []struct {
			Name string `json:"name"`
		} `json:"functionDeclarations"`
	} `json:"tools"`
}

type geminiContent struct {
	Role  string       `json:"role"`
	Parts []geminiPart `json:"parts"`
}

type geminiPart struct {
	Text         string `json:"text"`
	Thought      bool   `json:"thought"`
	FunctionCall *struct {
		ID   string          `json:"id"`
		Name string          `json:"name"`
		Args json.RawMessage `json:"args"`
	} `json:"functionCall"`
	FunctionResponse *struct {
		ID       string          `json:"id"`
		Name     string          `json:"name"`
		Response json.RawMessage `json:"response"`
	} `json:"functionResponse"`
}

// geminiText joins a content's text parts, thoughts left out.
func geminiText(c geminiContent) string {
	var texts []string
	for _, p := range c.Parts {
		if p.Text != "" && !p.Thought {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n")
}

// decodeGemini turns a generateContent request body into a Request: role
// "model" is the assistant; a functionResponse becomes a tool result whose
// text is the response object's JSON, on a message of role "tool".
func decodeGemini(model string, stream bool, body []byte) (*Request, error) {
	var gr geminiRequest
	if err := json.Unmarshal(body, &gr); err != nil {
		return nil, fmt.Errorf("gemini request: %w", err)
	}
	req := &Request{API: "gemini", Model: model, Stream: stream}
	if gr.SystemInstruction != nil {
		req.System = geminiText(*gr.SystemInstruction)
	}
	for _, t := range gr.Tools {
		for _, f := range t.FunctionDeclarations {
			req.Tools = append(req.Tools, f.Name)
		}
	}
	for _, c := range gr.Contents {
		msg := Message{Role: c.Role, Text: geminiText(c)}
		if c.Role == "model" {
			msg.Role = "assistant"
		}
		for _, p := range c.Parts {
			switch {
			case p.FunctionCall != nil:
				msg.ToolCalls = append(msg.ToolCalls, ToolCall{ID: p.FunctionCall.ID, Name: p.FunctionCall.Name, Args: p.FunctionCall.Args})
			case p.FunctionResponse != nil:
				msg.ToolResults = append(msg.ToolResults, ToolResult{ID: p.FunctionResponse.ID, Text: string(p.FunctionResponse.Response)})
			}
		}
		if len(msg.ToolResults) > 0 && msg.Text == "" && len(msg.ToolCalls) == 0 {
			msg.Role = "tool"
		}
		req.Messages = append(req.Messages, msg)
	}
	return req, nil
}

// generateContent serves both methods: the path's last segment is
// "<model>:<method>".
func (s *Server) generateContent(w http.ResponseWriter, r *http.Request) {
	body, ok := s.readBody(w, r)
	if !ok {
		return
	}
	model, method, _ := strings.Cut(r.PathValue("call"), ":")
	if method != "streamGenerateContent" && method != "generateContent" {
		s.logRequest(r, body, "not-found")
		writeError(w, http.StatusNotFound, "fakemodel: no such Gemini method: "+method)
		return
	}
	req, err := decodeGemini(model, method == "streamGenerateContent", body)
	if err != nil {
		s.logRequest(r, body, "bad-request")
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	turn := s.decide(r, body, req)
	resp := geminiResponse(s.nextID("fake-response-"), model, turn)
	if !req.Stream {
		writeJSON(w, http.StatusOK, resp)
		return
	}
	newSSE(w).event("", resp)
}

// geminiResponse is one GenerateContentResponse holding the whole turn.
// Calls keep the id a scenario gave them (Gemini's own API sends none).
func geminiResponse(id, model string, t Turn) map[string]any {
	parts := []any{}
	if t.Text != "" {
		parts = append(parts, map[string]any{"text": t.Text})
	}
	for _, c := range t.ToolCalls {
		call := map[string]any{"name": c.Name, "args": argsOrEmpty(c.Args)}
		if c.ID != "" {
			call["id"] = c.ID
		}
		parts = append(parts, map[string]any{"functionCall": call})
	}
	return map[string]any{
		"candidates": []any{map[string]any{
			"content":      map[string]any{"role": "model", "parts": parts},
			"finishReason": "STOP", "index": 0,
		}},
		"usageMetadata": map[string]any{"promptTokenCount": fakeInputTokens, "candidatesTokenCount": fakeOutputTokens,
			"totalTokenCount": fakeInputTokens + fakeOutputTokens},
		"modelVersion": model,
		"responseId":   id,
	}
}

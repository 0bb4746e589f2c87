package fakemodel

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Gemini serves the Gemini API as Gemini CLI calls it when
// GOOGLE_GEMINI_BASE_URL points here:
//
//	POST /v1beta/models/<model>:streamGenerateContent?alt=sse  (SSE, the agent's turns)
//	POST /v1beta/models/<model>:generateContent                (JSON, e.g. the model router)
//
// Script decides every answer from the decoded request; the reply is one
// candidate holding the turn's text and function calls, so every request
// gets exactly one deterministic response.
type Gemini struct {
	Script func(GeminiRequest) GeminiTurn
}

// GeminiRequest is what a script sees of a generateContent request.
type GeminiRequest struct {
	// Model is the model named in the URL path.
	Model string
	// Stream is true for streamGenerateContent.
	Stream bool
	// System is the text of systemInstruction.
	System string
	// Contents is the conversation so far.
	Contents []GeminiContent
	// Tools lists the names of the declared functions.
	Tools []string
}

// GeminiContent is one turn of the conversation.
type GeminiContent struct {
	Role  string       `json:"role"`
	Parts []GeminiPart `json:"parts"`
}

// GeminiPart is one part of a turn; exactly one field is set in practice.
type GeminiPart struct {
	Text             string              `json:"text,omitempty"`
	Thought          bool                `json:"thought,omitempty"`
	FunctionCall     *GeminiFunctionCall `json:"functionCall,omitempty"`
	FunctionResponse *GeminiFunctionResp `json:"functionResponse,omitempty"`
}

// GeminiFunctionCall is a call the model made.
type GeminiFunctionCall struct {
	ID   string         `json:"id,omitempty"`
	Name string         `json:"name"`
	Args map[string]any `json:"args,omitempty"`
}

// GeminiFunctionResp is the agent's answer to a call.
type GeminiFunctionResp struct {
	ID       string         `json:"id,omitempty"`
	Name     string         `json:"name"`
	Response map[string]any `json:"response,omitempty"`
}

// GeminiTurn is the model's next turn: text, function calls, or both.
type GeminiTurn struct {
	Text  string
	Calls []GeminiFunctionCall
}

// HasTool reports whether the request declares the function name.
func (r GeminiRequest) HasTool(name string) bool {
	for _, t := range r.Tools {
		if t == name {
			return true
		}
	}
	return false
}

// Last returns the last content of the conversation (zero when empty).
func (r GeminiRequest) Last() GeminiContent {
	if len(r.Contents) == 0 {
		return GeminiContent{}
	}
	return r.Contents[len(r.Contents)-1]
}

// Responses returns the function responses of the last turn, by name.
func (c GeminiContent) Responses() map[string]GeminiFunctionResp {
	out := map[string]GeminiFunctionResp{}
	for _, p := range c.Parts {
		if p.FunctionResponse != nil {
			out[p.FunctionResponse.Name] = *p.FunctionResponse
		}
	}
	return out
}

// Text returns the concatenated text parts of the content.
func (c GeminiContent) Text() string {
	var b strings.Builder
	for _, p := range c.Parts {
		if !p.Thought {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

type geminiWireRequest struct {
	Contents          []GeminiContent `json:"contents"`
	SystemInstruction *GeminiContent  `json:"systemInstruction"`
	Tools             []struct {
		FunctionDeclarations []struct {
			Name string `json:"name"`
		} `json:"functionDeclarations"`
	} `json:"tools"`
}

// ParseGeminiRequest decodes a request of the Gemini API at path (the URL
// path, which names the model and the method).
func ParseGeminiRequest(path string, body []byte) (GeminiRequest, error) {
	const prefix = "/v1beta/models/"
	rest, ok := strings.CutPrefix(path, prefix)
	if !ok {
		return GeminiRequest{}, fmt.Errorf("gemini: unexpected path %q", path)
	}
	model, method, ok := strings.Cut(rest, ":")
	if !ok || (method != "streamGenerateContent" && method != "generateContent") {
		return GeminiRequest{}, fmt.Errorf("gemini: unexpected method in %q", path)
	}
	var wire geminiWireRequest
	if err := json.Unmarshal(body, &wire); err != nil {
		return GeminiRequest{}, fmt.Errorf("gemini: decoding request: %w", err)
	}
	req := GeminiRequest{Model: model, Stream: method == "streamGenerateContent", Contents: wire.Contents}
	if wire.SystemInstruction != nil {
		req.System = wire.SystemInstruction.Text()
	}
	for _, t := range wire.Tools {
		for _, f := range t.FunctionDeclarations {
			req.Tools = append(req.Tools, f.Name)
		}
	}
	return req, nil
}

// GeminiResponse encodes turn as one generateContent response object
// (also the one SSE event of a streamed answer).
func GeminiResponse(model string, turn GeminiTurn) ([]byte, error) {
	parts := []map[string]any{}
	if turn.Text != "" {
		parts = append(parts, map[string]any{"text": turn.Text})
	}
	for _, c := range turn.Calls {
		call := map[string]any{"name": c.Name, "args": c.Args}
		if c.Args == nil {
			call["args"] = map[string]any{}
		}
		if c.ID != "" {
			call["id"] = c.ID
		}
		parts = append(parts, map[string]any{"functionCall": call})
	}
	resp := map[string]any{
		"candidates": []any{map[string]any{
			"content":      map[string]any{"role": "model", "parts": parts},
			"finishReason": "STOP",
			"index":        0,
		}},
		"usageMetadata": map[string]any{"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
		"modelVersion":  model,
		"responseId":    "fake-response",
	}
	out, err := json.Marshal(resp)
	if err != nil {
		return nil, fmt.Errorf("gemini: encoding response: %w", err)
	}
	return out, nil
}

// ServeHTTP answers one generateContent or streamGenerateContent request.
func (g *Gemini) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	req, err := ParseGeminiRequest(r.URL.Path, body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	out, err := GeminiResponse(req.Model, g.Script(req))
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(out)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	_, _ = fmt.Fprintf(w, "data: %s\n\n", out)
}

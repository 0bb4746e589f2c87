package fakemodel

import (
	"encoding/json"
	"slices"
)

// Request is a model request decoded from any API into the parts a
// scenario decides on.
type Request struct {
	// API names the API the request came in on ("anthropic", "chat", ...).
	API   string
	Model string
	// System is the system prompt (instructions), all parts joined.
	System string
	// Tools lists the names of the tools the request offers.
	Tools    []string
	Messages []Message
	Stream   bool
}

// Message is one conversation entry.
type Message struct {
	Role string // "user", "assistant", "system" or "tool"
	// Text is the message's text, all text parts joined with newlines.
	Text        string
	ToolCalls   []ToolCall
	ToolResults []ToolResult
}

// ToolCall is a tool call the model made (in a request's history) or makes
// (in a Turn). An empty ID in a Turn is filled in by the server.
type ToolCall struct {
	ID   string
	Name string
	// Args is the JSON object of arguments.
	Args json.RawMessage
}

// ToolResult is the answer to a tool call.
type ToolResult struct {
	ID   string
	Text string
}

// Turn is the assistant's next turn: text, tool calls, or both.
type Turn struct {
	Text      string
	ToolCalls []ToolCall
}

// HasTool reports whether the request offers the named tool.
func (r *Request) HasTool(name string) bool { return slices.Contains(r.Tools, name) }

// FirstUserText is the text of the first user message ("" without one).
func (r *Request) FirstUserText() string {
	for _, m := range r.Messages {
		if m.Role == "user" && m.Text != "" {
			return m.Text
		}
	}
	return ""
}

// LastUserText is the text of the last user message ("" without one).
func (r *Request) LastUserText() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if m := r.Messages[i]; m.Role == "user" && m.Text != "" {
			return m.Text
		}
	}
	return ""
}

// AssistantTurns counts the assistant messages in the history: how many
// turns the model has already taken in this conversation.
func (r *Request) AssistantTurns() int {
	n := 0
	for _, m := range r.Messages {
		if m.Role == "assistant" {
			n++
		}
	}
	return n
}

// CalledTools lists the names of the tools the model called in the
// history, in order.
func (r *Request) CalledTools() []string {
	var names []string
	for _, m := range r.Messages {
		for _, c := range m.ToolCalls {
			names = append(names, c.Name)
		}
	}
	return names
}

// ToolResultFor returns the result of the tool call with the given id.
func (r *Request) ToolResultFor(id string) (ToolResult, bool) {
	for _, m := range r.Messages {
		for _, res := range m.ToolResults {
			if res.ID == id {
				return res, true
			}
		}
	}
	return ToolResult{}, false
}

// ToolTurns counts the assistant messages with tool calls: how many tool
// steps the model has taken (agents may seed a history with assistant
// text, so plain assistant messages do not count).
func (r *Request) ToolTurns() int {
	n := 0
	for _, m := range r.Messages {
		if m.Role == "assistant" && len(m.ToolCalls) > 0 {
			n++
		}
	}
	return n
}

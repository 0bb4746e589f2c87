package fakemodel

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestDecodeGemini(t *testing.T) {
	// Shape as Gemini CLI 0.61.0 sends it (cut down).
	body := `{"contents":[{"role":"user","parts":[{"text":"Use an agent"}]},
	{"role":"model","parts":[{"text":"hmm","thought":true},{"text":"ok"},{"functionCall":{"id":"invoke_agent_1","name":"invoke_agent","args":{"agent_name":"cli_help"}}}]},
	{"role":"user","parts":[{"functionResponse":{"id":"invoke_agent_1","name":"invoke_agent","response":{"output":"done"}}}]}],
	"systemInstruction":{"parts":[{"text":"You are"},{"text":"Gemini"}]},
	"tools":[{"functionDeclarations":[{"name":"read_file"},{"name":"invoke_agent"}]}]}`
	got, err := decodeGemini("gemini-3.8-flash", true, []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	want := Request{API: "gemini", Model: "gemini-3.8-flash", Stream: true, System: "You are\nGemini",
		Tools: []string{"read_file", "invoke_agent"}, Messages: []Message{
			{Role: "user", Text: "Use an agent"},
			{Role: "assistant", Text: "ok", ToolCalls: []ToolCall{{ID: "invoke_agent_1", Name: "invoke_agent", Args: json.RawMessage(`{"agent_name":"cli_help"}`)}}},
			{Role: "tool", ToolResults: []ToolResult{{ID: "invoke_agent_1", Text: `{"output":"done"}`}}},
		}}
	if !reflect.DeepEqual(*got, want) {
		t.Errorf("got  %+v\nwant %+v", *got, want)
	}
	if _, err := decodeGemini("m", false, []byte(`{"contents":7}`)); err == nil {
		t.Error("a bad body decoded")
	}
}

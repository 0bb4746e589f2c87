package fakemodel

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestDecodeResponses(t *testing.T) {
	tests := []struct {
		name string
		body string
		want Request
	}{
		{
			// Shapes as Codex 0.166.0 sends them (cut down).
			name: "namespaces, additional_tools, tool_search and calls",
			body: `{"model":"gpt-5.5","stream":true,"instructions":"i",
			"tools":[{"type":"function","name":"exec_command"},{"type":"namespace","name":"multi_agent_v1","tools":[{"type":"function","name":"spawn_agent"}]},{"type":"tool_search","execution":"client"},{"type":"web_search"}],
			"input":[
			 {"type":"additional_tools","role":"developer","tools":[{"type":"namespace","name":"collaboration","tools":[{"type":"function","name":"wait_agent"}]}]},
			 {"type":"message","role":"developer","content":[{"type":"input_text","text":"dev"}]},
			 {"type":"message","role":"user","content":[{"type":"input_text","text":"Delegate"},{"type":"input_text","text":"this"}]},
			 {"type":"reasoning","summary":[]},
			 {"type":"message","role":"assistant","content":[{"type":"output_text","text":"searching"}]},
			 {"type":"tool_search_call","call_id":"s1","execution":"client","arguments":{"query":"spawn agent"}},
			 {"type":"tool_search_output","call_id":"s1","execution":"client","tools":[{"type":"namespace","name":"multi_agent_v1","tools":[{"type":"function","name":"close_agent"}]}]},
			 {"type":"function_call","call_id":"c1","name":"spawn_agent","namespace":"multi_agent_v1","arguments":"{\"message\":\"m\"}"},
			 {"type":"function_call_output","call_id":"c1","output":"{\"agent_id\":\"A\"}"},
			 {"type":"custom_tool_call_output","call_id":"c2","output":[{"type":"input_text","text":"x"}]}
			]}`,
			want: Request{API: "responses", Model: "gpt-5.5", Stream: true, System: "i\ndev",
				Tools: []string{"exec_command", "multi_agent_v1.spawn_agent", "tool_search", "web_search", "collaboration.wait_agent", "multi_agent_v1.close_agent"},
				Messages: []Message{
					{Role: "user", Text: "Delegate\nthis"},
					{Role: "assistant", Text: "searching", ToolCalls: []ToolCall{{ID: "s1", Name: "tool_search", Args: json.RawMessage(`{"query":"spawn agent"}`)}}},
					{Role: "tool", ToolResults: []ToolResult{{ID: "s1", Text: "multi_agent_v1.close_agent"}}},
					{Role: "assistant", ToolCalls: []ToolCall{{ID: "c1", Name: "multi_agent_v1.spawn_agent", Args: json.RawMessage(`{"message":"m"}`)}}},
					{Role: "tool", ToolResults: []ToolResult{{ID: "c1", Text: `{"agent_id":"A"}`}}},
					{Role: "tool", ToolResults: []ToolResult{{ID: "c2", Text: "x"}}},
				}},
		},
		{
			name: "string content, no tools",
			body: `{"model":"m","input":[{"type":"message","role":"user","content":"hi"}]}`,
			want: Request{API: "responses", Model: "m", Messages: []Message{{Role: "user", Text: "hi"}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decodeResponses([]byte(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(*got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", *got, tt.want)
			}
		})
	}
}

func TestDecodeResponsesErrors(t *testing.T) {
	for _, body := range []string{
		`{`,
		`{"input":[{"type":"message","role":"user","content":7}]}`,
		`{"input":[{"type":"additional_tools","tools":7}]}`,
		`{"input":[{"type":"tool_search_output","tools":"x"}]}`,
		`{"input":[{"type":"function_call_output","output":{}}]}`,
	} {
		if _, err := decodeResponses([]byte(body)); err == nil {
			t.Errorf("decodeResponses(%s) succeeded", body)
		}
	}
}

// TestResponsesItems pins how a turn's calls go out: a namespaced name as
// a function_call with its namespace, "tool_search" as a client-executed
// tool_search_call only when the request offers that tool type.
func TestResponsesItems(t *testing.T) {
	tests := []struct {
		name  string
		tools []string
		turn  Turn
		want  string
	}{
		{"namespaced function", nil, Turn{ToolCalls: []ToolCall{{ID: "c1", Name: "multi_agent_v1.spawn_agent", Args: json.RawMessage(`{"message":"m"}`)}}},
			`[{"arguments":"{\"message\":\"m\"}","call_id":"c1","id":"fc_c1","name":"spawn_agent","namespace":"multi_agent_v1","status":"completed","type":"function_call"}]`},
		{"tool_search offered", []string{"tool_search"}, Turn{ToolCalls: []ToolCall{{ID: "s1", Name: "tool_search", Args: json.RawMessage(`{"query":"q","limit":8}`)}}},
			`[{"arguments":{"query":"q","limit":8},"call_id":"s1","execution":"client","status":"completed","type":"tool_search_call"}]`},
		{"tool_search not offered is a function", nil, Turn{ToolCalls: []ToolCall{{ID: "s1", Name: "tool_search"}}},
			`[{"arguments":"{}","call_id":"s1","id":"fc_s1","name":"tool_search","status":"completed","type":"function_call"}]`},
		{"no output", nil, Turn{}, `[]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := json.Marshal(responsesItems("r", &Request{Tools: tt.tools}, tt.turn))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

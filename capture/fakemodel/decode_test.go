package fakemodel

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestDecode(t *testing.T) {
	tests := []struct {
		name   string
		decode func([]byte) (*Request, error)
		body   string
		want   Request
	}{
		{
			name:   "anthropic system blocks, tools, tool use and result",
			decode: decodeAnthropic,
			body: `{"model":"m","stream":true,"system":[{"type":"text","text":"a"},{"type":"text","text":"b"}],"tools":[{"name":"Agent"},{"name":"Read"}],
				"messages":[{"role":"user","content":"go"},{"role":"assistant","content":[{"type":"text","text":"ok"},{"type":"tool_use","id":"t1","name":"Agent","input":{"x":1}}]},
				{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"done"}]}]}`,
			want: Request{API: "anthropic", Model: "m", Stream: true, System: "a\nb", Tools: []string{"Agent", "Read"}, Messages: []Message{
				{Role: "user", Text: "go"},
				{Role: "assistant", Text: "ok", ToolCalls: []ToolCall{{ID: "t1", Name: "Agent", Args: json.RawMessage(`{"x":1}`)}}},
				{Role: "user", ToolResults: []ToolResult{{ID: "t1", Text: "done"}}},
			}},
		},
		{
			name:   "anthropic string system, no tools",
			decode: decodeAnthropic,
			body:   `{"model":"m","system":"s","messages":[{"role":"user","content":[{"type":"image"},{"type":"text","text":"hi"}]}]}`,
			want:   Request{API: "anthropic", Model: "m", System: "s", Messages: []Message{{Role: "user", Text: "hi"}}},
		},
		{
			name:   "chat system and developer messages, tool calls and tool results",
			decode: func(b []byte) (*Request, error) { r, _, err := decodeChat(b); return r, err },
			body: `{"model":"m","stream":true,"tools":[{"type":"function","function":{"name":"agent"}}],"messages":[
				{"role":"system","content":"s1"},{"role":"developer","content":[{"type":"text","text":"s2"}]},{"role":"user","content":"go"},
				{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"agent","arguments":"{\"a\":2}"}}]},
				{"role":"tool","tool_call_id":"c1","content":[{"type":"text","text":"r"}]}]}`,
			want: Request{API: "chat", Model: "m", Stream: true, System: "s1\ns2", Tools: []string{"agent"}, Messages: []Message{
				{Role: "user", Text: "go"},
				{Role: "assistant", ToolCalls: []ToolCall{{ID: "c1", Name: "agent", Args: json.RawMessage(`{"a":2}`)}}},
				{Role: "tool", ToolResults: []ToolResult{{ID: "c1", Text: "r"}}},
			}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.decode([]byte(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(*got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", *got, tt.want)
			}
		})
	}
}

func TestRequestHelpers(t *testing.T) {
	r := &Request{Tools: []string{"agent"}, Messages: []Message{
		{Role: "user", Text: "first"},
		{Role: "assistant", Text: "Got it."},
		{Role: "assistant", ToolCalls: []ToolCall{{ID: "a", Name: "agent"}, {ID: "b", Name: "ls"}}},
		{Role: "tool", ToolResults: []ToolResult{{ID: "a", Text: "res"}}},
		{Role: "user", Text: "last"},
	}}
	if got := r.FirstUserText(); got != "first" {
		t.Errorf("FirstUserText = %q", got)
	}
	if got := r.LastUserText(); got != "last" {
		t.Errorf("LastUserText = %q", got)
	}
	if got := r.AssistantTurns(); got != 2 {
		t.Errorf("AssistantTurns = %d, want 2", got)
	}
	if got := r.ToolTurns(); got != 1 {
		t.Errorf("ToolTurns = %d, want 1", got)
	}
	if got := r.CalledTools(); !reflect.DeepEqual(got, []string{"agent", "ls"}) {
		t.Errorf("CalledTools = %v", got)
	}
	if res, ok := r.ToolResultFor("a"); !ok || res.Text != "res" {
		t.Errorf("ToolResultFor(a) = %v %v", res, ok)
	}
	if _, ok := r.ToolResultFor("b"); ok {
		t.Error("ToolResultFor(b) found a result that does not exist")
	}
	if !r.HasTool("agent") || r.HasTool("task") {
		t.Error("HasTool wrong")
	}
}

func TestScript(t *testing.T) {
	s := &Script{Rules: []Rule{
		{Name: "first", When: func(r *Request) bool { return r.Model == "a" }, Reply: func(*Request) Turn { return Turn{Text: "1"} }},
		{Name: "second", When: func(r *Request) bool { return r.Model != "" }, Reply: func(*Request) Turn { return Turn{Text: "2"} }},
	}}
	tests := []struct {
		model, wantText, wantRule string
	}{
		{"a", "1", "first"},
		{"b", "2", "second"},
		{"", "OK.", "fallback"},
	}
	for _, tt := range tests {
		turn, rule := s.Next(&Request{Model: tt.model})
		if turn.Text != tt.wantText || rule != tt.wantRule {
			t.Errorf("model %q: got %q by %s, want %q by %s", tt.model, turn.Text, rule, tt.wantText, tt.wantRule)
		}
	}
	if got := s.Fired(); !reflect.DeepEqual(got, map[string]int{"first": 1, "second": 1, "fallback": 1}) {
		t.Errorf("Fired = %v", got)
	}
	s.Fallback = func(*Request) Turn { return Turn{Text: "fb"} }
	if turn, _ := s.Next(&Request{}); turn.Text != "fb" {
		t.Errorf("Fallback not used: %q", turn.Text)
	}
}

func FuzzDecodeAnthropic(f *testing.F) {
	f.Add([]byte(`{"model":"m","system":[{"type":"text","text":"a"}],"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"x"}]}]}]}`))
	f.Add([]byte(`{"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"n","input":{}}]}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := decodeAnthropic(body)
		if err == nil && req.API != "anthropic" {
			t.Fatal("decoded request without its API")
		}
	})
}

func FuzzDecodeChat(f *testing.F) {
	f.Add([]byte(`{"model":"m","messages":[{"role":"system","content":"s"},{"role":"tool","tool_call_id":"c","content":[{"type":"text","text":"x"}]}]}`))
	f.Add([]byte(`{"messages":[{"role":"assistant","content":null,"tool_calls":[{"id":"c","function":{"name":"n","arguments":"{}"}}]}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		req, _, err := decodeChat(body)
		if err == nil && req.API != "chat" {
			t.Fatal("decoded request without its API")
		}
	})
}

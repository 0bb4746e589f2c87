package fakemodel

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
)

// post sends body to h at path and returns the status and the whole answer.
func post(t *testing.T, h http.Handler, path, body string) (int, string, string) {
	t.Helper()
	srv := httptest.NewServer(h)
	defer srv.Close()
	resp, err := http.Post(srv.URL+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(out)
}

func TestResponsesServeHTTP(t *testing.T) {
	tests := []struct {
		name   string
		turn   ResponsesTurn
		golden string
	}{
		{"text", ResponsesTurn{Text: "hello <b> & \"you\""}, "responses-text.sse"},
		{"tool_search_call", ResponsesTurn{Calls: []ResponsesCall{{CallID: "call_search", ToolSearch: true,
			Arguments: map[string]any{"query": "spawn agent", "limit": 8}}}}, "responses-tool-search.sse"},
		{"namespaced_function_call_and_text", ResponsesTurn{Text: "spawning", Calls: []ResponsesCall{
			{CallID: "call_spawn", Name: "spawn_agent", Namespace: "multi_agent_v1", Arguments: map[string]any{"message": "go"}},
			{CallID: "call_cmd", Name: "exec_command"},
		}}, "responses-calls.sse"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got ResponsesRequest
			h := &Responses{Script: func(r ResponsesRequest) ResponsesTurn { got = r; return tt.turn }}
			status, ctype, body := post(t, h, "/v1/responses", `{"model":"gpt-5.5","input":[],"stream":true}`)
			if status != http.StatusOK || ctype != "text/event-stream" {
				t.Fatalf("status %d, content type %q", status, ctype)
			}
			if got.Model != "gpt-5.5" {
				t.Errorf("script saw model %q", got.Model)
			}
			compareGolden(t, tt.golden, body)
		})
	}
}

func TestResponsesRejects(t *testing.T) {
	h := &Responses{Script: func(ResponsesRequest) ResponsesTurn { t.Error("script called"); return ResponsesTurn{} }}
	tests := []struct {
		name, path, body string
		status           int
	}{
		{"other_path", "/v1/chat/completions", `{}`, http.StatusNotFound},
		{"not_json", "/v1/responses", `{`, http.StatusBadRequest},
		{"bad_additional_tools", "/v1/responses", `{"input":[{"type":"additional_tools","tools":7}]}`, http.StatusBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if status, _, _ := post(t, h, tt.path, tt.body); status != tt.status {
				t.Errorf("status %d, want %d", status, tt.status)
			}
		})
	}
}

func TestParseResponsesRequest(t *testing.T) {
	// Shapes as Codex 0.166.0 sends them (bodies cut down to what matters).
	body := `{"model":"gpt-5.5","stream":true,
	"tools":[{"type":"function","name":"exec_command"},{"type":"namespace","name":"multi_agent_v1","tools":[{"type":"function","name":"spawn_agent"}]},{"type":"tool_search","execution":"client"},{"type":"web_search"}],
	"input":[
	 {"type":"additional_tools","role":"developer","tools":[{"type":"namespace","name":"collaboration","tools":[{"type":"function","name":"wait_agent"}]}]},
	 {"type":"message","role":"user","content":[{"type":"input_text","text":"Delegate "},{"type":"input_text","text":"this"}]},
	 {"type":"tool_search_call","call_id":"call_search","arguments":{"query":"spawn agent"}},
	 {"type":"tool_search_output","call_id":"call_search","tools":[{"type":"namespace","name":"multi_agent_v1","tools":[{"type":"function","name":"close_agent"}]}]},
	 {"type":"function_call_output","call_id":"call_spawn","output":"{\"agent_id\":\"A\"}"}
	]}`
	req, err := ParseResponsesRequest([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	wantTools := []string{"exec_command", "multi_agent_v1.spawn_agent", "tool_search", "web_search", "collaboration.wait_agent", "multi_agent_v1.close_agent"}
	if !reflect.DeepEqual(req.Tools, wantTools) {
		t.Errorf("tools %q, want %q", req.Tools, wantTools)
	}
	if got := req.UserTexts(); !reflect.DeepEqual(got, []string{"Delegate this"}) {
		t.Errorf("user texts %q", got)
	}
	if ns, ok := req.ToolNamespace("wait_agent"); !ok || ns != "collaboration" {
		t.Errorf("wait_agent namespace %q %v", ns, ok)
	}
	if ns, ok := req.ToolNamespace("exec_command"); !ok || ns != "" {
		t.Errorf("exec_command namespace %q %v", ns, ok)
	}
	if _, ok := req.ToolNamespace("nope"); ok {
		t.Error("unknown tool found")
	}
	out, ok := req.Output("call_spawn")
	if !ok || out.Text() != `{"agent_id":"A"}` {
		t.Errorf("output %q %v", out.Text(), ok)
	}
	if last, ok := req.LastCallOutput(); !ok || last.CallID != "call_spawn" {
		t.Errorf("last output %+v %v", last, ok)
	}
}

// codexRequest builds a request body from input items and tools.
func codexRequest(t *testing.T, tools []any, input ...any) ResponsesRequest {
	t.Helper()
	body, err := json.Marshal(map[string]any{"model": "gpt-5.5", "tools": tools, "input": input})
	if err != nil {
		t.Fatal(err)
	}
	req, err := ParseResponsesRequest(body)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

func userMsg(text string) map[string]any {
	return map[string]any{"type": "message", "role": "user", "content": []any{map[string]any{"type": "input_text", "text": text}}}
}

func callOutput(id, output string) map[string]any {
	return map[string]any{"type": "function_call_output", "call_id": id, "output": output}
}

func TestCodexScenarios(t *testing.T) {
	deferred := []any{map[string]any{"type": "function", "name": "exec_command"}, map[string]any{"type": "tool_search", "execution": "client"}}
	found := map[string]any{"type": "tool_search_output", "call_id": "call_search", "tools": []any{map[string]any{
		"type": "namespace", "name": "multi_agent_v1", "tools": []any{
			map[string]any{"type": "function", "name": "spawn_agent"}, map[string]any{"type": "function", "name": "wait_agent"}}}}}
	direct := []any{map[string]any{"type": "namespace", "name": "multi_agent_v1", "tools": []any{
		map[string]any{"type": "function", "name": "spawn_agent"}, map[string]any{"type": "function", "name": "wait_agent"}}}}
	prompt := userMsg("Delegate reading notes.txt to a subagent")
	spawned := callOutput("call_spawn", `{"agent_id":"thread-1","nickname":"Kant"}`)
	tests := []struct {
		scenario string
		name     string
		req      ResponsesRequest
		want     ResponsesTurn
	}{
		{"foreground", "searches for deferred tools", codexRequest(t, deferred, prompt),
			ResponsesTurn{Calls: []ResponsesCall{{CallID: "call_search", ToolSearch: true, Arguments: map[string]any{"query": "spawn agent", "limit": 8}}}}},
		{"foreground", "spawns once found", codexRequest(t, deferred, prompt, found),
			ResponsesTurn{Calls: []ResponsesCall{{CallID: "call_spawn", Name: "spawn_agent", Namespace: "multi_agent_v1", Arguments: map[string]any{"message": CodexTask}}}}},
		{"foreground", "spawns when offered directly", codexRequest(t, direct, prompt),
			ResponsesTurn{Calls: []ResponsesCall{{CallID: "call_spawn", Name: "spawn_agent", Namespace: "multi_agent_v1", Arguments: map[string]any{"message": CodexTask}}}}},
		{"foreground", "waits for the spawned agent", codexRequest(t, deferred, prompt, found, spawned),
			ResponsesTurn{Calls: []ResponsesCall{{CallID: "call_wait", Name: "wait_agent", Namespace: "multi_agent_v1", Arguments: map[string]any{"targets": []string{"thread-1"}, "timeout_ms": 120000}}}}},
		{"foreground", "answers after the wait", codexRequest(t, deferred, prompt, found, spawned, callOutput("call_wait", "{}")),
			ResponsesTurn{Text: "The subagent reports: notes.txt says hello notes."}},
		{"foreground", "spawn output without an id", codexRequest(t, deferred, prompt, found, callOutput("call_spawn", "boom")),
			ResponsesTurn{Text: `spawn_agent gave no agent id: "boom"`}},
		{"foreground", "child runs a command", codexRequest(t, deferred, userMsg(CodexTask)),
			ResponsesTurn{Calls: []ResponsesCall{{CallID: "call_child_cmd", Name: "exec_command", Arguments: map[string]any{"cmd": "cat notes.txt"}}}}},
		{"foreground", "child reports", codexRequest(t, deferred, userMsg(CodexTask), callOutput("call_child_cmd", "hello notes")),
			ResponsesTurn{Text: "notes.txt says: hello notes"}},
		{"foreground", "title", codexRequest(t, nil, userMsg("Your task is to generate a very short title for a conversation")),
			ResponsesTurn{Text: "Read the notes"}},
		{"foreground", "no tools at all", codexRequest(t, nil, prompt),
			ResponsesTurn{Text: "No multi-agent tools were offered."}},
		{"background", "does not wait", codexRequest(t, deferred, prompt, found, spawned),
			ResponsesTurn{Text: "A subagent is reading notes.txt in the background."}},
		{"permission", "child asks for escalation", codexRequest(t, deferred, userMsg(CodexTask)),
			ResponsesTurn{Calls: []ResponsesCall{{CallID: "call_child_cmd", Name: "exec_command", Arguments: map[string]any{
				"cmd": "cat notes.txt", "sandbox_permissions": "require_escalated", "justification": "Read the notes file"}}}}},
	}
	for _, tt := range tests {
		t.Run(tt.scenario+"/"+tt.name, func(t *testing.T) {
			script, ok := CodexScenarios[tt.scenario]
			if !ok {
				t.Fatalf("no scenario %q", tt.scenario)
			}
			if got := script(tt.req); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

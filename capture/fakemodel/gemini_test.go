package fakemodel

import (
	"encoding/json"
	"net/http"
	"reflect"
	"testing"
)

func TestGeminiServeHTTP(t *testing.T) {
	tests := []struct {
		name, path string
		turn       GeminiTurn
		ctype      string
		golden     string
	}{
		{"stream_text", "/v1beta/models/gemini-2.5-pro:streamGenerateContent", GeminiTurn{Text: "hello"},
			"text/event-stream", "gemini-text.sse"},
		{"stream_calls", "/v1beta/models/gemini-3.8-flash:streamGenerateContent", GeminiTurn{Calls: []GeminiFunctionCall{
			{Name: "invoke_agent", Args: map[string]any{"agent_name": "cli_help", "prompt": "p"}},
			{Name: "get_internal_docs", ID: "c2"},
		}}, "text/event-stream", "gemini-calls.sse"},
		{"generate_content_json", "/v1beta/models/gemini-3.5-flash-lite:generateContent", GeminiTurn{Text: `{"complexity_score":10}`},
			"application/json", "gemini-generate.json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &Gemini{Script: func(GeminiRequest) GeminiTurn { return tt.turn }}
			status, ctype, body := post(t, h, tt.path+"?alt=sse", `{"contents":[]}`)
			if status != http.StatusOK || ctype != tt.ctype {
				t.Fatalf("status %d, content type %q", status, ctype)
			}
			compareGolden(t, tt.golden, body)
		})
	}
}

func TestGeminiRejects(t *testing.T) {
	h := &Gemini{Script: func(GeminiRequest) GeminiTurn { t.Error("script called"); return GeminiTurn{} }}
	tests := []struct {
		name, path, body string
		status           int
	}{
		{"other_path", "/v1/models/x:streamGenerateContent", `{}`, http.StatusNotFound},
		{"other_method", "/v1beta/models/x:countTokens", `{}`, http.StatusNotFound},
		{"not_json", "/v1beta/models/x:streamGenerateContent", `{`, http.StatusNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if status, _, _ := post(t, h, tt.path, tt.body); status != tt.status {
				t.Errorf("status %d, want %d", status, tt.status)
			}
		})
	}
}

func TestParseGeminiRequest(t *testing.T) {
	// Shape as Gemini CLI 0.61.0 sends it (cut down).
	body := `{"contents":[{"role":"user","parts":[{"text":"Use an agent"}]},
	{"role":"model","parts":[{"text":"thinking","thought":true},{"functionCall":{"id":"invoke_agent_1","name":"invoke_agent","args":{"agent_name":"cli_help"}}}]},
	{"role":"user","parts":[{"functionResponse":{"id":"invoke_agent_1","name":"invoke_agent","response":{"output":"done"}}}]}],
	"systemInstruction":{"parts":[{"text":"You are "},{"text":"Gemini"}]},
	"tools":[{"functionDeclarations":[{"name":"read_file"},{"name":"invoke_agent"}]}]}`
	req, err := ParseGeminiRequest("/v1beta/models/gemini-3.8-flash:streamGenerateContent", []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if req.Model != "gemini-3.8-flash" || !req.Stream || req.System != "You are Gemini" {
		t.Errorf("model %q stream %v system %q", req.Model, req.Stream, req.System)
	}
	if !reflect.DeepEqual(req.Tools, []string{"read_file", "invoke_agent"}) || !req.HasTool("invoke_agent") || req.HasTool("glob") {
		t.Errorf("tools %q", req.Tools)
	}
	if got := req.Contents[1].Text(); got != "" {
		t.Errorf("thought text counted: %q", got)
	}
	resp, ok := req.Last().Responses()["invoke_agent"]
	if !ok || resp.Response["output"] != "done" {
		t.Errorf("responses %+v", req.Last().Responses())
	}
	if (GeminiRequest{}).Last().Role != "" {
		t.Error("empty request has a last content")
	}
}

func geminiReq(t *testing.T, stream bool, system string, tools []string, contents ...GeminiContent) GeminiRequest {
	t.Helper()
	return GeminiRequest{Model: "m", Stream: stream, System: system, Tools: tools, Contents: contents}
}

func userText(s string) GeminiContent {
	return GeminiContent{Role: "user", Parts: []GeminiPart{{Text: s}}}
}

func funcResp(name string) GeminiContent {
	return GeminiContent{Role: "user", Parts: []GeminiPart{{FunctionResponse: &GeminiFunctionResp{Name: name, Response: map[string]any{"output": "x"}}}}}
}

func TestGeminiScenarios(t *testing.T) {
	root := []string{"read_file", "invoke_agent"}
	investigator := []string{"list_directory", "read_file", "glob", "grep_search", "complete_task"}
	help := []string{"get_internal_docs", "complete_task"}
	generalist := []string{"read_file", "run_shell_command", "complete_task"}
	tests := []struct {
		scenario, name string
		req            GeminiRequest
		want           GeminiTurn
	}{
		{"cli-help", "router gets a score", geminiReq(t, false, "assign a **Complexity Score** from 1 to 100", nil, userText("x")),
			GeminiTurn{Text: `{"complexity_reasoning":"A single delegated read.","complexity_score":10}`}},
		{"cli-help", "root invokes the agent", geminiReq(t, true, "", root, userText("go")),
			GeminiTurn{Calls: []GeminiFunctionCall{{Name: "invoke_agent", Args: map[string]any{"agent_name": "cli_help", "prompt": GeminiTask}}}}},
		{"cli-help", "root answers after the agent", geminiReq(t, true, "", root, userText("go"), funcResp("invoke_agent")),
			GeminiTurn{Text: "The subagent has answered."}},
		{"cli-help", "subagent reads the docs", geminiReq(t, true, "", help, userText("q")),
			GeminiTurn{Calls: []GeminiFunctionCall{{Name: "get_internal_docs", Args: map[string]any{}}}}},
		{"cli-help", "subagent completes", geminiReq(t, true, "", help, userText("q"), funcResp("get_internal_docs")),
			GeminiTurn{Calls: []GeminiFunctionCall{{Name: "complete_task", Args: map[string]any{"report": map[string]any{"answer": "Run gemini --acp.", "sources": []string{"index.md"}}}}}}},
		{"codebase-investigator", "root invokes the agent", geminiReq(t, true, "", root, userText("go")),
			GeminiTurn{Calls: []GeminiFunctionCall{{Name: "invoke_agent", Args: map[string]any{"agent_name": "codebase_investigator", "prompt": GeminiTask}}}}},
		{"codebase-investigator", "subagent reads the file", geminiReq(t, true, "", investigator, userText("q")),
			GeminiTurn{Calls: []GeminiFunctionCall{{Name: "read_file", Args: map[string]any{"file_path": "notes.txt"}}}}},
		{"codebase-investigator", "subagent reports", geminiReq(t, true, "", investigator, userText("q"), funcResp("read_file")),
			GeminiTurn{Calls: []GeminiFunctionCall{{Name: "complete_task", Args: map[string]any{"report": map[string]any{
				"SummaryOfFindings": "notes.txt says hello notes", "ExplorationTrace": []string{"read_file notes.txt"}, "RelevantLocations": []any{}}}}}}},
		{"generalist", "subagent runs a command", geminiReq(t, true, "", generalist, userText("q")),
			GeminiTurn{Calls: []GeminiFunctionCall{{Name: "run_shell_command", Args: map[string]any{"command": "cat notes.txt", "description": "Read the notes"}}}}},
		{"generalist", "subagent completes", geminiReq(t, true, "", generalist, userText("q"), funcResp("run_shell_command")),
			GeminiTurn{Calls: []GeminiFunctionCall{{Name: "complete_task", Args: map[string]any{"result": map[string]any{"response": "notes.txt says hello notes"}}}}}},
		{"generalist", "no tools", geminiReq(t, true, "", nil, userText("q")),
			GeminiTurn{Text: "No agent tools were offered."}},
	}
	for _, tt := range tests {
		t.Run(tt.scenario+"/"+tt.name, func(t *testing.T) {
			got := GeminiScenarios[tt.scenario](tt.req)
			// Compare as JSON: the scripts build maps whose slices are typed.
			g, _ := json.Marshal(got)
			w, _ := json.Marshal(tt.want)
			if string(g) != string(w) {
				t.Errorf("got  %s\nwant %s", g, w)
			}
		})
	}
}

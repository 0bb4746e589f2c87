package scenario

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/acp-normalize/acp-normalize/capture/fakemodel"
)

// TestGeminiFlow walks each Gemini scenario through Gemini CLI's requests:
// the router's complexity question, invoke_agent, the subagent's tool and
// complete_task (with the output its agent definition names), and the
// closing text.
func TestGeminiFlow(t *testing.T) {
	tests := []struct {
		scenario, agent, childTool, output string
	}{
		{"codebase-investigator", "codebase_investigator", "read_file", "report"},
		{"cli-help", "cli_help", "get_internal_docs", "report"},
		{"generalist", "generalist", "run_shell_command", "result"},
	}
	for _, tt := range tests {
		t.Run(tt.scenario, func(t *testing.T) {
			sc, err := Lookup("gemini/"+tt.scenario, Params{Workspace: "/tmp/acp-capture/gemini/ws"})
			if err != nil {
				t.Fatal(err)
			}
			next := answers(t, sc)
			router := &fakemodel.Request{System: "assign a **Complexity Score** from 1 to 100", Messages: []fakemodel.Message{{Role: "user", Text: sc.Prompt}}}
			var score struct {
				Score int `json:"complexity_score"`
			}
			if err := json.Unmarshal([]byte(next(router, "router").Text), &score); err != nil || score.Score == 0 {
				t.Errorf("router answer: %v %+v", err, score)
			}
			main := &fakemodel.Request{Tools: []string{"read_file", "invoke_agent"}, Messages: []fakemodel.Message{{Role: "user", Text: sc.Prompt}}}
			launch := next(main, "main:launch")
			var args struct {
				Agent  string `json:"agent_name"`
				Prompt string `json:"prompt"`
			}
			if err := json.Unmarshal(launch.ToolCalls[0].Args, &args); err != nil || args.Agent != tt.agent || !strings.HasPrefix(args.Prompt, Marker) {
				t.Fatalf("invoke_agent args %s", launch.ToolCalls[0].Args)
			}
			child := &fakemodel.Request{Tools: []string{tt.childTool, "complete_task"}, Messages: []fakemodel.Message{
				{Role: "user", Text: "Your task is:\n<objective>\n" + args.Prompt + "\n</objective>"}}}
			for i, want := range []string{tt.childTool, "complete_task"} {
				turn := next(child, "sub:step")
				if turn.ToolCalls[0].Name != want {
					t.Fatalf("child step %d calls %s, want %s", i, turn.ToolCalls[0].Name, want)
				}
				if want == "complete_task" && !strings.HasPrefix(string(turn.ToolCalls[0].Args), `{"`+tt.output+`":`) {
					t.Errorf("complete_task args %s, want the %q output", turn.ToolCalls[0].Args, tt.output)
				}
				id := "c" + string(rune('0'+i))
				c := turn.ToolCalls[0]
				c.ID = id
				child.Messages = append(child.Messages, fakemodel.Message{Role: "assistant", ToolCalls: []fakemodel.ToolCall{c}},
					fakemodel.Message{Role: "tool", ToolResults: []fakemodel.ToolResult{{ID: id, Text: "{}"}}})
			}
			main.Messages = append(main.Messages, fakemodel.Message{Role: "assistant", ToolCalls: []fakemodel.ToolCall{{Name: "invoke_agent"}}},
				fakemodel.Message{Role: "tool", ToolResults: []fakemodel.ToolResult{{Text: `{"output":"done"}`}}})
			if turn := next(main, "main:final"); turn.Text == "" {
				t.Error("no closing text")
			}
		})
	}
}

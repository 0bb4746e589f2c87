package scenario

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/acp-normalize/acp-normalize/capture/fakemodel"
)

// TestCodexFlow walks each Codex scenario through the requests Codex 0.166
// sends (model gpt-5.5): tool_search for the deferred multi-agent tools,
// spawn_agent, the child's command and report, wait_agent (foreground
// only) and the closing text; title generation gets a fixed title.
func TestCodexFlow(t *testing.T) {
	p := Params{Workspace: "/tmp/acp-capture/codex/ws"}
	tests := []struct {
		scenario  string
		wait      bool
		escalated bool
	}{
		{"foreground", true, false},
		{"background", false, false},
		{"permission", true, true},
	}
	for _, tt := range tests {
		t.Run(tt.scenario, func(t *testing.T) {
			sc, err := Lookup("codex/"+tt.scenario, p)
			if err != nil {
				t.Fatal(err)
			}
			next := answers(t, sc)
			answer := func(r *fakemodel.Request, turn fakemodel.Turn, id, result string) {
				c := turn.ToolCalls[0]
				c.ID = id
				r.Messages = append(r.Messages,
					fakemodel.Message{Role: "assistant", ToolCalls: []fakemodel.ToolCall{c}},
					fakemodel.Message{Role: "tool", ToolResults: []fakemodel.ToolResult{{ID: id, Text: result}}})
			}
			if turn := next(&fakemodel.Request{Messages: []fakemodel.Message{{Role: "user", Text: "Your task is to generate a very short title for a conversation"}}}, "title"); turn.Text == "" {
				t.Error("no title")
			}

			main := &fakemodel.Request{Tools: []string{"exec_command", "tool_search"}, Messages: []fakemodel.Message{
				{Role: "user", Text: "<environment_context>...</environment_context>"}, {Role: "user", Text: sc.Prompt}}}
			search := next(main, "main:search")
			if len(search.ToolCalls) != 1 || search.ToolCalls[0].Name != "tool_search" {
				t.Fatalf("search turn %+v", search)
			}
			answer(main, search, "call_1", "multi_agent_v1.spawn_agent\nmulti_agent_v1.wait_agent")
			main.Tools = append(main.Tools, "multi_agent_v1.spawn_agent", "multi_agent_v1.wait_agent")
			launch := next(main, "main:launch")
			if len(launch.ToolCalls) != 1 || launch.ToolCalls[0].Name != "multi_agent_v1.spawn_agent" {
				t.Fatalf("launch turn %+v", launch)
			}
			var args struct {
				Message string `json:"message"`
			}
			if err := json.Unmarshal(launch.ToolCalls[0].Args, &args); err != nil || !strings.HasPrefix(args.Message, Marker) {
				t.Fatalf("spawn_agent args %s: want a message starting with the marker", launch.ToolCalls[0].Args)
			}

			child := &fakemodel.Request{Tools: []string{"exec_command"}, Messages: []fakemodel.Message{
				{Role: "user", Text: "<environment_context>...</environment_context>"}, {Role: "user", Text: args.Message}}}
			step := next(child, "sub:step")
			var cmd map[string]any
			if err := json.Unmarshal(step.ToolCalls[0].Args, &cmd); err != nil {
				t.Fatal(err)
			}
			if _, escalated := cmd["sandbox_permissions"]; step.ToolCalls[0].Name != "exec_command" || escalated != tt.escalated {
				t.Errorf("child step %s %v, want exec_command escalated=%v", step.ToolCalls[0].Name, cmd, tt.escalated)
			}
			answer(child, step, "call_2", NotesFirstLine)
			if report := next(child, "sub:final"); !strings.Contains(report.Text, NotesFirstLine) {
				t.Errorf("child report %q", report.Text)
			}

			answer(main, launch, "call_3", `{"agent_id":"thread-9","nickname":"Kant"}`)
			if !tt.wait {
				if turn := next(main, "main:final"); !strings.Contains(turn.Text, "background") {
					t.Errorf("closing text %q", turn.Text)
				}
				return
			}
			wait := next(main, "main:wait")
			if len(wait.ToolCalls) != 1 || wait.ToolCalls[0].Name != "multi_agent_v1.wait_agent" ||
				!strings.Contains(string(wait.ToolCalls[0].Args), `"targets":["thread-9"]`) {
				t.Fatalf("wait turn %+v", wait)
			}
			answer(main, wait, "call_4", `{"status":{"thread-9":{"completed":"done"}}}`)
			if turn := next(main, "main:final"); !strings.Contains(turn.Text, NotesFirstLine) {
				t.Errorf("closing text %q", turn.Text)
			}
		})
	}
}

func TestCodexEdges(t *testing.T) {
	sc, err := Lookup("codex/foreground", Params{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		req      fakemodel.Request
		wantRule string
		wantText string
	}{
		{"spawn offered directly: no search", fakemodel.Request{Tools: []string{"multi_agent_v1.spawn_agent"},
			Messages: []fakemodel.Message{{Role: "user", Text: "go"}}}, "main:launch", ""},
		{"no multi-agent tools at all", fakemodel.Request{Tools: []string{"exec_command"},
			Messages: []fakemodel.Message{{Role: "user", Text: "go"}}}, "fallback", "No multi-agent tools were offered (tools: exec_command)."},
		{"spawn result without an agent id", fakemodel.Request{Tools: []string{"multi_agent_v1.spawn_agent", "multi_agent_v1.wait_agent"},
			Messages: []fakemodel.Message{{Role: "user", Text: "go"},
				{Role: "assistant", ToolCalls: []fakemodel.ToolCall{{ID: "c", Name: "multi_agent_v1.spawn_agent"}}},
				{Role: "tool", ToolResults: []fakemodel.ToolResult{{ID: "c", Text: "oops"}}}}}, "main:wait", "spawn_agent returned no agent id: oops"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			turn, rule := sc.Script.Next(&tt.req)
			if rule != tt.wantRule || (tt.wantText != "" && turn.Text != tt.wantText) {
				t.Errorf("rule %s turn %+v, want %s %q", rule, turn, tt.wantRule, tt.wantText)
			}
		})
	}
}

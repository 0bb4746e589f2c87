package scenario

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/acp-normalize/acp-normalize/capture/fakemodel"
)

// TestDelegationFlow walks every scenario through the conversation an
// agent would have: the main agent's first request launches the
// subagent, the subagent takes its tool steps then reports, and the main
// agent closes with text.
func TestDelegationFlow(t *testing.T) {
	p := Params{Workspace: "/tmp/acp-capture/x/ws"}
	// The main agent's subagent tool of each vendor whose scripts are a
	// Delegation (a vendor missing here fails: add its tool).
	launchTools := map[string]string{"qwen": "agent", "opencode": "task", "claude": "Agent"}
	for _, vendor := range Vendors() {
		if vendor == "codex" || vendor == "gemini" {
			continue // their flows differ: codex_test.go, gemini_test.go
		}
		all, _ := scenarios(vendor, p)
		for name, sc := range all {
			t.Run(vendor+"/"+name, func(t *testing.T) {
				launchTool, ok := launchTools[vendor]
				if !ok {
					t.Fatalf("no launch tool for %s in TestDelegationFlow", vendor)
				}
				if sc.Prompt == "" || strings.Contains(sc.Prompt, Marker) {
					t.Fatalf("prompt %q: want text without the subagent marker", sc.Prompt)
				}
				main := &fakemodel.Request{Messages: []fakemodel.Message{{Role: "user", Text: sc.Prompt}}}
				main.Tools = []string{"read", launchTool}
				turn, rule := sc.Script.Next(main)
				if rule != "main:launch" || len(turn.ToolCalls) != 1 || turn.ToolCalls[0].Name != launchTool {
					t.Fatalf("first main turn %+v by %s, want a %s call", turn, rule, launchTool)
				}
				var args struct {
					Prompt string `json:"prompt"`
				}
				if err := json.Unmarshal(turn.ToolCalls[0].Args, &args); err != nil || !strings.HasPrefix(args.Prompt, Marker) {
					t.Fatalf("launch args %s: want a prompt starting with the marker", turn.ToolCalls[0].Args)
				}
				sub := &fakemodel.Request{Tools: []string{"SubagentHandback"}, Messages: []fakemodel.Message{{Role: "user", Text: args.Prompt}}}
				for step := 0; ; step++ {
					turn, rule = sc.Script.Next(sub)
					if rule == "sub:final" {
						break
					}
					if rule == "sub:handback" {
						// Claude: the report goes as a tool call; after it the
						// subagent is not asked again, so close here.
						var args map[string]string
						if err := json.Unmarshal(turn.ToolCalls[0].Args, &args); err != nil {
							t.Fatal(err)
						}
						turn = fakemodel.Turn{Text: args["message"]}
						break
					}
					if rule != "sub:step" || len(turn.ToolCalls) != 1 || step > 3 {
						t.Fatalf("subagent step %d: %+v by %s", step, turn, rule)
					}
					call := turn.ToolCalls[0]
					call.ID = "c" + string(rune('0'+step))
					sub.Messages = append(sub.Messages,
						fakemodel.Message{Role: "assistant", ToolCalls: []fakemodel.ToolCall{call}},
						fakemodel.Message{Role: "tool", ToolResults: []fakemodel.ToolResult{{ID: call.ID, Text: "ok"}}})
				}
				if handback := vendor == "claude"; handback != (rule == "sub:handback") {
					t.Errorf("subagent closed by %s", rule)
				}
				if !strings.Contains(turn.Text, NotesFirstLine) {
					t.Errorf("subagent report %q lacks the first line", turn.Text)
				}
				main.Messages = append(main.Messages,
					fakemodel.Message{Role: "assistant", ToolCalls: []fakemodel.ToolCall{{ID: "L", Name: launchTool}}},
					fakemodel.Message{Role: "tool", ToolResults: []fakemodel.ToolResult{{ID: "L", Text: turn.Text}}})
				if turn, rule = sc.Script.Next(main); rule != "main:final" || turn.Text == "" {
					t.Errorf("closing main turn %+v by %s", turn, rule)
				}
			})
		}
	}
}

func TestLookupErrors(t *testing.T) {
	for _, id := range []string{"qwen", "nobody/foreground", "qwen/nothing"} {
		if _, err := Lookup(id, Params{}); err == nil {
			t.Errorf("Lookup(%q) succeeded", id)
		}
	}
}

// answers returns a step of sc's script: the turn it answers a request
// with, failing the test unless rule wantRule answered.
func answers(t *testing.T, sc Scenario) func(r *fakemodel.Request, wantRule string) fakemodel.Turn {
	return func(r *fakemodel.Request, wantRule string) fakemodel.Turn {
		t.Helper()
		turn, rule := sc.Script.Next(r)
		if rule != wantRule {
			t.Fatalf("rule %s answered (%+v), want %s", rule, turn, wantRule)
		}
		return turn
	}
}

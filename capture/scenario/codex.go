package scenario

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/acp-normalize/acp-normalize/capture/fakemodel"
)

// Codex scripts Codex 0.166 behind codex-acp 2.6 (OpenAI Responses). With
// the model gpt-5.5 the multi-agent tools (namespace multi_agent_v1) are
// deferred: the main agent calls tool_search first, then spawn_agent;
// a foreground scenario then calls wait_agent with the returned agent id,
// a background one ends its turn at once. The child thread's only user
// message holding the marker is its task; it runs one shell command.
func (book) Codex(p Params) map[string]Scenario {
	readPrompt := Marker + " Read the file notes.txt in the workspace and report its first line."
	read := map[string]any{"cmd": "cat notes.txt"}
	escalated := map[string]any{"cmd": "cat notes.txt", "sandbox_permissions": "require_escalated",
		"justification": "Read the notes file outside the sandbox"}
	return map[string]Scenario{
		"foreground": {
			Prompt: "Delegate reading notes.txt to a subagent, wait for it, and tell me its first line.",
			Script: codexScript(readPrompt, read, true),
		},
		"background": {
			Prompt: "Delegate reading notes.txt to a subagent in the background; do not wait for it.",
			Script: codexScript(readPrompt, read, false),
		},
		"permission": {
			Prompt: "Delegate reading notes.txt to a subagent (it must ask before running its command), wait for it, and tell me its first line.",
			Script: codexScript(readPrompt, escalated, true),
		},
	}
}

// codexChild reports whether a request comes from the spawned child: some
// user message holds the marker (Codex puts its environment context
// first).
func codexChild(r *fakemodel.Request) bool {
	for _, m := range r.Messages {
		if m.Role == "user" && strings.Contains(m.Text, Marker) {
			return true
		}
	}
	return false
}

// codexTool returns the offered tool named name, namespaced or not.
func codexTool(r *fakemodel.Request, name string) (string, bool) {
	for _, t := range r.Tools {
		if t == name || strings.HasSuffix(t, "."+name) {
			return t, true
		}
	}
	return "", false
}

// codexCalled returns the result of the last call of the tool name
// (namespaced or not), and whether it was called at all.
func codexCalled(r *fakemodel.Request, name string) (fakemodel.ToolResult, bool, bool) {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		for _, c := range r.Messages[i].ToolCalls {
			if c.Name == name || strings.HasSuffix(c.Name, "."+name) {
				res, answered := r.ToolResultFor(c.ID)
				return res, true, answered
			}
		}
	}
	return fakemodel.ToolResult{}, false, false
}

func codexScript(task string, childCmd map[string]any, wait bool) *fakemodel.Script {
	final := "First line of notes.txt: " + NotesFirstLine
	main := func(r *fakemodel.Request) bool { return !codexChild(r) }
	return &fakemodel.Script{Rules: []fakemodel.Rule{
		textRule("title", "generate a very short title", "Reading the notes"),
		{
			Name: "sub:step",
			When: func(r *fakemodel.Request) bool {
				_, called, _ := codexCalled(r, "exec_command")
				return codexChild(r) && !called
			},
			Reply: func(*fakemodel.Request) fakemodel.Turn {
				return call("exec_command", childCmd)
			},
		},
		{
			Name:  "sub:final",
			When:  codexChild,
			Reply: func(*fakemodel.Request) fakemodel.Turn { return fakemodel.Turn{Text: final} },
		},
		{
			Name: "main:search",
			When: func(r *fakemodel.Request) bool {
				_, offered := codexTool(r, "spawn_agent")
				_, searched, _ := codexCalled(r, "tool_search")
				return main(r) && !offered && !searched && r.HasTool("tool_search")
			},
			Reply: func(*fakemodel.Request) fakemodel.Turn {
				return call("tool_search", map[string]any{"query": "spawn agent", "limit": 8})
			},
		},
		{
			Name: "main:launch",
			When: func(r *fakemodel.Request) bool {
				_, offered := codexTool(r, "spawn_agent")
				_, spawned, _ := codexCalled(r, "spawn_agent")
				return main(r) && offered && !spawned
			},
			Reply: func(r *fakemodel.Request) fakemodel.Turn {
				name, _ := codexTool(r, "spawn_agent")
				return call(name, map[string]any{"message": task})
			},
		},
		{
			Name: "main:wait",
			When: func(r *fakemodel.Request) bool {
				_, spawned, answered := codexCalled(r, "spawn_agent")
				_, waited, _ := codexCalled(r, "wait_agent")
				_, offered := codexTool(r, "wait_agent")
				return wait && main(r) && spawned && answered && !waited && offered
			},
			Reply: func(r *fakemodel.Request) fakemodel.Turn {
				res, _, _ := codexCalled(r, "spawn_agent")
				var spawned struct {
					AgentID string `json:"agent_id"`
				}
				if err := json.Unmarshal([]byte(res.Text), &spawned); err != nil || spawned.AgentID == "" {
					return fakemodel.Turn{Text: "spawn_agent returned no agent id: " + res.Text}
				}
				name, _ := codexTool(r, "wait_agent")
				return call(name, map[string]any{"targets": []string{spawned.AgentID}, "timeout_ms": 120000})
			},
		},
		{
			Name: "main:final",
			When: func(r *fakemodel.Request) bool {
				_, spawned, _ := codexCalled(r, "spawn_agent")
				return main(r) && spawned
			},
			Reply: func(r *fakemodel.Request) fakemodel.Turn {
				if _, waited, _ := codexCalled(r, "wait_agent"); waited {
					return fakemodel.Turn{Text: "The subagent reports: " + NotesFirstLine}
				}
				return fakemodel.Turn{Text: "A subagent is reading notes.txt in the background."}
			},
		},
	}, Fallback: func(r *fakemodel.Request) fakemodel.Turn {
		return fakemodel.Turn{Text: "No multi-agent tools were offered (tools: " + strings.Join(slices.Clone(r.Tools), ", ") + ")."}
	}}
}

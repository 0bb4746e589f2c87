package fakemodel

import (
	"encoding/json"
	"fmt"
	"strings"
)

// CodexTask is the task every Codex scenario delegates; the child thread
// is recognised by it.
const CodexTask = "Read notes.txt and report what it says."

// Call ids the Codex scripts use, so a later request can tell which step
// it answers.
const (
	codexSearchCall = "call_search"
	codexSpawnCall  = "call_spawn"
	codexWaitCall   = "call_wait"
	codexChildCall  = "call_child_cmd"
)

// CodexScenarios lists the Codex scripts by name:
//
//   - foreground: spawn a subagent, then wait for it.
//   - background: spawn a subagent and end the turn without waiting.
//   - permission: as foreground, but the child's command asks for
//     escalated permissions, so Codex asks the client (with a mode that
//     has the user review approvals).
//
// In every script the root agent finds the multi-agent tools first
// (tool_search) when they are deferred, the child runs `cat notes.txt` and
// reports, and title generation gets a fixed title.
var CodexScenarios = map[string]func(ResponsesRequest) ResponsesTurn{
	"foreground": func(r ResponsesRequest) ResponsesTurn { return codexScript(r, true, false) },
	"background": func(r ResponsesRequest) ResponsesTurn { return codexScript(r, false, false) },
	"permission": func(r ResponsesRequest) ResponsesTurn { return codexScript(r, true, true) },
}

func codexScript(r ResponsesRequest, wait, escalate bool) ResponsesTurn {
	users := r.UserTexts()
	if len(users) > 0 && strings.Contains(users[len(users)-1], "generate a very short title") {
		return ResponsesTurn{Text: "Read the notes"}
	}
	if isCodexChild(users) {
		if _, ok := r.Output(codexChildCall); ok {
			return ResponsesTurn{Text: "notes.txt says: hello notes"}
		}
		args := map[string]any{"cmd": "cat notes.txt"}
		if escalate {
			args["sandbox_permissions"] = "require_escalated"
			args["justification"] = "Read the notes file"
		}
		return ResponsesTurn{Calls: []ResponsesCall{{CallID: codexChildCall, Name: "exec_command", Arguments: args}}}
	}
	if _, ok := r.Output(codexWaitCall); ok {
		return ResponsesTurn{Text: "The subagent reports: notes.txt says hello notes."}
	}
	if out, ok := r.Output(codexSpawnCall); ok {
		if !wait {
			return ResponsesTurn{Text: "A subagent is reading notes.txt in the background."}
		}
		var spawned struct {
			AgentID string `json:"agent_id"`
		}
		if err := json.Unmarshal([]byte(out.Text()), &spawned); err != nil || spawned.AgentID == "" {
			return ResponsesTurn{Text: fmt.Sprintf("spawn_agent gave no agent id: %q", out.Text())}
		}
		ns, _ := r.ToolNamespace("wait_agent")
		return ResponsesTurn{Calls: []ResponsesCall{{CallID: codexWaitCall, Name: "wait_agent", Namespace: ns,
			Arguments: map[string]any{"targets": []string{spawned.AgentID}, "timeout_ms": 120000}}}}
	}
	if ns, ok := r.ToolNamespace("spawn_agent"); ok {
		return ResponsesTurn{Calls: []ResponsesCall{{CallID: codexSpawnCall, Name: "spawn_agent", Namespace: ns,
			Arguments: map[string]any{"message": CodexTask}}}}
	}
	if _, searched := r.Output(codexSearchCall); !searched && r.HasTool("tool_search") {
		return ResponsesTurn{Calls: []ResponsesCall{{CallID: codexSearchCall, ToolSearch: true,
			Arguments: map[string]any{"query": "spawn agent", "limit": 8}}}}
	}
	return ResponsesTurn{Text: "No multi-agent tools were offered."}
}

// isCodexChild tells a child thread, whose only user message is the task,
// from the root thread, whose first user message is the user's prompt.
func isCodexChild(users []string) bool {
	for _, u := range users {
		if strings.Contains(u, CodexTask) {
			return true
		}
	}
	return false
}

package fakemodel

import "strings"

// GeminiTask is the task every Gemini scenario delegates.
const GeminiTask = "Read notes.txt and report what it says."

// GeminiScenarios lists the Gemini CLI scripts by name, one per built-in
// agent: the root agent calls invoke_agent for that agent, the subagent
// uses one of its tools and then complete_task with the output its agent
// definition requires, and the root agent answers in text. Requests that
// are not the agent loop (the model router's generateContent) get a fixed
// low complexity score.
var GeminiScenarios = map[string]func(GeminiRequest) GeminiTurn{
	"codebase-investigator": geminiScript("codebase_investigator"),
	"cli-help":              geminiScript("cli_help"),
	"generalist":            geminiScript("generalist"),
}

func geminiScript(agent string) func(GeminiRequest) GeminiTurn {
	return func(r GeminiRequest) GeminiTurn {
		if !r.Stream && strings.Contains(r.System, "Complexity Score") {
			return GeminiTurn{Text: `{"complexity_reasoning":"A single delegated read.","complexity_score":10}`}
		}
		last := r.Last()
		if r.HasTool("invoke_agent") {
			if _, ok := last.Responses()["invoke_agent"]; ok {
				return GeminiTurn{Text: "The subagent has answered."}
			}
			return GeminiTurn{Calls: []GeminiFunctionCall{{Name: "invoke_agent",
				Args: map[string]any{"agent_name": agent, "prompt": GeminiTask}}}}
		}
		if !r.HasTool("complete_task") {
			return GeminiTurn{Text: "No agent tools were offered."}
		}
		first, done := geminiSubagentSteps(r)
		if len(last.Responses()) > 0 {
			return GeminiTurn{Calls: []GeminiFunctionCall{{Name: "complete_task", Args: done}}}
		}
		return GeminiTurn{Calls: []GeminiFunctionCall{first}}
	}
}

// geminiSubagentSteps returns a subagent's one tool call and its
// complete_task arguments, by the tools its agent definition gives it
// (packages/core/src/agents/*: each names its own output).
func geminiSubagentSteps(r GeminiRequest) (GeminiFunctionCall, map[string]any) {
	switch {
	case r.HasTool("get_internal_docs"): // cli_help
		return GeminiFunctionCall{Name: "get_internal_docs", Args: map[string]any{}},
			map[string]any{"report": map[string]any{"answer": "Run gemini --acp.", "sources": []string{"index.md"}}}
	case r.HasTool("run_shell_command"): // generalist: every tool
		return GeminiFunctionCall{Name: "run_shell_command", Args: map[string]any{"command": "cat notes.txt", "description": "Read the notes"}},
			map[string]any{"result": map[string]any{"response": "notes.txt says hello notes"}}
	default: // codebase_investigator
		return GeminiFunctionCall{Name: "read_file", Args: map[string]any{"file_path": "notes.txt"}},
			map[string]any{"report": map[string]any{"SummaryOfFindings": "notes.txt says hello notes",
				"ExplorationTrace": []string{"read_file notes.txt"}, "RelevantLocations": []any{}}}
	}
}

package scenario

import "github.com/acp-normalize/acp-normalize/capture/fakemodel"

// Gemini scripts Gemini CLI 0.61 (Gemini API). Its subagents are the
// built-in agents behind the invoke_agent tool ({agent_name, prompt});
// each finishes by calling complete_task with the output its definition
// names (packages/core/src/agents/*.ts). Gemini first asks a router model
// (generateContent) for a complexity score. There is no background option
// and no subagent tool that asks for permission: one scenario per agent.
func (book) Gemini(p Params) map[string]Scenario {
	router := textRule("router", "Complexity Score", `{"complexity_reasoning":"A single delegated read.","complexity_score":10}`)
	final := "First line of notes.txt: " + NotesFirstLine
	mainFinal := "The subagent has answered."
	delegate := func(agent, task string, child ...fakemodel.Turn) Scenario {
		return Scenario{
			Prompt: "Use the " + agent + " agent to read notes.txt and tell me its first line.",
			Script: Delegation{Extra: []fakemodel.Rule{router}, LaunchTool: "invoke_agent",
				LaunchArgs: map[string]any{"agent_name": agent, "prompt": Marker + " " + task},
				ChildSteps: child, ChildFinal: final, MainFinal: mainFinal}.Script(),
		}
	}
	readTask := "Read the file notes.txt in the workspace and report its first line."
	return map[string]Scenario{
		"codebase-investigator": delegate("codebase_investigator", readTask,
			call("read_file", map[string]any{"file_path": "notes.txt"}),
			call("complete_task", map[string]any{"report": map[string]any{
				"SummaryOfFindings": final, "ExplorationTrace": []string{"read_file notes.txt"}, "RelevantLocations": []any{}}})),
		"cli-help": delegate("cli_help", "How do I start Gemini CLI as an ACP agent?",
			call("get_internal_docs", map[string]any{}),
			call("complete_task", map[string]any{"report": map[string]any{"answer": "Run gemini --acp.", "sources": []string{"index.md"}}})),
		// In the default approval mode Gemini's ACP layer denies the
		// generalist's own confirmation, so the child steps never run.
		"generalist": delegate("generalist", readTask,
			call("run_shell_command", map[string]any{"command": "cat notes.txt", "description": "Read the notes"}),
			call("complete_task", map[string]any{"result": map[string]any{"response": final}})),
	}
}

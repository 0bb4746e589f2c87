package scenario

import "path/filepath"

// OpenCode scripts OpenCode 1.18 (Chat Completions through
// @ai-sdk/openai-compatible). Its subagent tool is "task"; background
// subagents need OPENCODE_EXPERIMENTAL_BACKGROUND_SUBAGENTS=true and the
// "background" argument.
func (book) OpenCode(p Params) map[string]Scenario {
	notes := filepath.Join(p.Workspace, "notes.txt")
	read := call("read", map[string]any{"filePath": notes})
	shell := call("bash", map[string]any{"command": "cp notes.txt notes-copy.txt"})
	title := textRule("title", "title generator", "Reading notes")
	return map[string]Scenario{
		"foreground": {
			Prompt: "Delegate reading notes.txt to a subagent and tell me its first line.",
			Script: Delegation{Extra: []fakemodelRule{title}, LaunchTool: "task", LaunchArgs: launchArgs("general", readPrompt, nil),
				ChildSteps: steps(read), ChildFinal: ChildFinal, MainFinal: reportFinal}.Script(),
		},
		"background": {
			Prompt: "Delegate reading notes.txt to a background subagent and tell me its first line when it is done.",
			Script: Delegation{Extra: []fakemodelRule{title}, LaunchTool: "task", LaunchArgs: launchArgs("general", readPrompt, map[string]any{"background": true}),
				ChildSteps: steps(read), ChildFinal: ChildFinal, MainFinal: reportFinal}.Script(),
		},
		"permission": {
			Prompt: "Delegate copying notes.txt to notes-copy.txt to a subagent (using the shell) and tell me the first line.",
			Script: Delegation{Extra: []fakemodelRule{title}, LaunchTool: "task",
				LaunchArgs: launchArgs("general", shellPrompt, nil),
				ChildSteps: steps(shell, read), ChildFinal: ChildFinal, MainFinal: reportFinal}.Script(),
		},
	}
}

package scenario

import "path/filepath"

// opencode scripts OpenCode 1.18 (Chat Completions through
// @ai-sdk/openai-compatible). Its subagent tool is "task"; background
// subagents need OPENCODE_EXPERIMENTAL_BACKGROUND_SUBAGENTS=true and the
// "background" argument.
func opencode(p Params) map[string]Scenario {
	notes := filepath.Join(p.Workspace, "notes.txt")
	launch := func(prompt string, background bool) map[string]any {
		args := map[string]any{
			"description":   "Read notes file",
			"prompt":        Marker + " " + prompt,
			"subagent_type": "general",
		}
		if background {
			args["background"] = true
		}
		return args
	}
	read := call("read", map[string]any{"filePath": notes})
	shell := call("bash", map[string]any{"command": "cp notes.txt notes-copy.txt"})
	final := "First line of notes.txt: " + NotesFirstLine
	mainFinal := "The subagent reports: " + NotesFirstLine
	readPrompt := "Read the file notes.txt in the workspace and report its first line."
	title := textRule("title", "title generator", "Reading notes")
	return map[string]Scenario{
		"foreground": {
			Prompt: "Delegate reading notes.txt to a subagent and tell me its first line.",
			Script: Delegation{Extra: []fakemodelRule{title}, LaunchTool: "task", LaunchArgs: launch(readPrompt, false),
				ChildSteps: steps(read), ChildFinal: final, MainFinal: mainFinal}.Script(),
		},
		"background": {
			Prompt: "Delegate reading notes.txt to a background subagent and tell me its first line when it is done.",
			Script: Delegation{Extra: []fakemodelRule{title}, LaunchTool: "task", LaunchArgs: launch(readPrompt, true),
				ChildSteps: steps(read), ChildFinal: final, MainFinal: mainFinal}.Script(),
		},
		"permission": {
			Prompt: "Delegate copying notes.txt to notes-copy.txt to a subagent (using the shell) and tell me the first line.",
			Script: Delegation{Extra: []fakemodelRule{title}, LaunchTool: "task",
				LaunchArgs: launch("[use-shell] Copy notes.txt to notes-copy.txt with the shell, then read it and report its first line.", false),
				ChildSteps: steps(shell, read), ChildFinal: final, MainFinal: mainFinal}.Script(),
		},
	}
}

package scenario

import "path/filepath"

// claude scripts Claude Code behind claude-agent-acp (Anthropic Messages).
// Its subagent tool is "Agent"; without run_in_background:false the
// launch is asynchronous (background).
func claude(p Params) map[string]Scenario {
	notes := filepath.Join(p.Workspace, "notes.txt")
	launch := func(prompt string, foreground bool) map[string]any {
		args := map[string]any{
			"description":   "Read notes file",
			"prompt":        Marker + " " + prompt,
			"subagent_type": "general-purpose",
		}
		if foreground {
			args["run_in_background"] = false
		}
		return args
	}
	read := call("Read", map[string]any{"file_path": notes})
	shell := call("Bash", map[string]any{"command": "cp notes.txt notes-copy.txt", "description": "Copy the notes file"})
	final := "First line of notes.txt: " + NotesFirstLine
	mainFinal := "The subagent reports: " + NotesFirstLine
	// In "auto" mode Claude Code has the model grade each action first
	// (its transcript holds the subagent prompt: this rule must come
	// before the subagent's); a low severity allows it.
	extra := []fakemodelRule{textRule("auto-mode-classifier", "<severity>N</severity>", "<severity>5</severity>")}
	readPrompt := "Read the file notes.txt in the workspace and report its first line."
	return map[string]Scenario{
		"foreground": {
			Prompt: "Delegate reading notes.txt to a subagent and tell me its first line.",
			Script: Delegation{Extra: extra, LaunchTool: "Agent", LaunchArgs: launch(readPrompt, true),
				ChildSteps: steps(read), ChildFinal: final, MainFinal: mainFinal,
				HandbackTool: "SubagentHandback", HandbackArg: "message"}.Script(),
		},
		"background": {
			Prompt: "Delegate reading notes.txt to a background subagent and tell me its first line when it is done.",
			Script: Delegation{Extra: extra, LaunchTool: "Agent", LaunchArgs: launch(readPrompt, false),
				ChildSteps: steps(read), ChildFinal: final, MainFinal: mainFinal,
				HandbackTool: "SubagentHandback", HandbackArg: "message"}.Script(),
		},
		"permission": {
			Prompt: "Delegate copying notes.txt to notes-copy.txt to a subagent (using the shell) and tell me the first line.",
			Script: Delegation{Extra: extra, LaunchTool: "Agent",
				LaunchArgs: launch("[use-bash] Copy notes.txt to notes-copy.txt with Bash, then read it and report its first line.", true),
				ChildSteps: steps(shell, read), ChildFinal: final, MainFinal: mainFinal,
				HandbackTool: "SubagentHandback", HandbackArg: "message"}.Script(),
		},
	}
}

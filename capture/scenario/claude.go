package scenario

import "path/filepath"

// Claude scripts Claude Code behind claude-agent-acp (Anthropic Messages).
// Its subagent tool is "Agent"; without run_in_background:false the
// launch is asynchronous (background).
func (book) Claude(p Params) map[string]Scenario {
	notes := filepath.Join(p.Workspace, "notes.txt")
	read := call("Read", map[string]any{"file_path": notes})
	shell := call("Bash", map[string]any{"command": "cp notes.txt notes-copy.txt", "description": "Copy the notes file"})
	// In "auto" mode Claude Code has the model grade each action first
	// (its transcript holds the subagent prompt: this rule must come
	// before the subagent's); a low severity allows it.
	extra := []fakemodelRule{textRule("auto-mode-classifier", "<severity>N</severity>", "<severity>5</severity>")}
	return map[string]Scenario{
		"foreground": {
			Prompt: "Delegate reading notes.txt to a subagent and tell me its first line.",
			Script: Delegation{Extra: extra, LaunchTool: "Agent", LaunchArgs: launchArgs("general-purpose", readPrompt, map[string]any{"run_in_background": false}),
				ChildSteps: steps(read), ChildFinal: ChildFinal, MainFinal: reportFinal,
				HandbackTool: "SubagentHandback", HandbackArg: "message"}.Script(),
		},
		"background": {
			Prompt: "Delegate reading notes.txt to a background subagent and tell me its first line when it is done.",
			Script: Delegation{Extra: extra, LaunchTool: "Agent", LaunchArgs: launchArgs("general-purpose", readPrompt, nil),
				ChildSteps: steps(read), ChildFinal: ChildFinal, MainFinal: reportFinal,
				HandbackTool: "SubagentHandback", HandbackArg: "message"}.Script(),
		},
		"permission": {
			Prompt: "Delegate copying notes.txt to notes-copy.txt to a subagent (using the shell) and tell me the first line.",
			Script: Delegation{Extra: extra, LaunchTool: "Agent",
				LaunchArgs: launchArgs("general-purpose", "[use-bash] Copy notes.txt to notes-copy.txt with Bash, then read it and report its first line.", map[string]any{"run_in_background": false}),
				ChildSteps: steps(shell, read), ChildFinal: ChildFinal, MainFinal: reportFinal,
				HandbackTool: "SubagentHandback", HandbackArg: "message"}.Script(),
		},
	}
}

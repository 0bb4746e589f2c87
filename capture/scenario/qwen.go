package scenario

import "path/filepath"

// Qwen scripts Qwen Code 0.24 (OpenAI Chat Completions). Its subagent tool
// is "agent" and runs in the background unless run_in_background is
// false; in "auto" approval mode it first asks the model whether the
// subagent call should be blocked.
func (book) Qwen(p Params) map[string]Scenario {
	notes := filepath.Join(p.Workspace, "notes.txt")
	// After the turn Qwen asks for a prompt suggestion and a memory
	// review; both get plain answers that change nothing.
	extra := []fakemodelRule{
		textRule("classifier", "shouldBlock", `{"shouldBlock":false}`),
		textRule("suggestion", "SUGGESTION MODE", "Thanks."),
		textRule("memory", "Managed memory", "Nothing to save."),
	}
	launch := func(background bool, prompt string) map[string]any {
		return launchArgs("general-purpose", prompt, map[string]any{"run_in_background": background})
	}
	read := call("read_file", map[string]any{"file_path": notes})
	shell := call("run_shell_command", map[string]any{
		"command": "cp notes.txt notes-copy.txt", "description": "Copy the notes file", "is_background": false,
	})
	return map[string]Scenario{
		"foreground": {
			Prompt: "Delegate reading notes.txt to a subagent (run it in the foreground) and tell me its first line.",
			Script: Delegation{Extra: extra, LaunchTool: "agent", LaunchArgs: launch(false, readPrompt),
				ChildSteps: steps(read), ChildFinal: ChildFinal, MainFinal: reportFinal}.Script(),
		},
		"background": {
			Prompt: "Delegate reading notes.txt to a background subagent and tell me its first line when it is done.",
			Script: Delegation{Extra: extra, LaunchTool: "agent", LaunchArgs: launch(true, readPrompt),
				ChildSteps: steps(read), ChildFinal: ChildFinal, MainFinal: reportFinal}.Script(),
		},
		"permission": {
			Prompt: "Delegate copying notes.txt to notes-copy.txt to a subagent (foreground, using the shell) and tell me the first line.",
			Script: Delegation{Extra: extra, LaunchTool: "agent",
				LaunchArgs: launch(false, shellPrompt),
				ChildSteps: steps(shell, read), ChildFinal: ChildFinal, MainFinal: reportFinal}.Script(),
		},
	}
}

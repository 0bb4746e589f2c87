package scenario

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"

	"github.com/acp-normalize/acp-normalize/capture/fakemodel"
)

// Marker starts every subagent prompt the scripts send: a request whose
// first user message holds it comes from the subagent.
const Marker = "[subtask-marker]"

// NotesFirstLine is the first line of the workspace's notes.txt, which the
// scripts' subagents report.
const NotesFirstLine = "alpha: the first line of the notes file"

// What the scripted models say, the same for every vendor whose script
// is a Delegation of the notes task; a recording's snapshots carry them
// (the vendors' capture tests read them from here).
const (
	// ChildFinal is the subagent's answer.
	ChildFinal = "First line of notes.txt: " + NotesFirstLine
	// ReadTask is the prompt of the usual launch call, behind Marker.
	ReadTask = Marker + " " + readPrompt
	// ShellTask is the prompt of a launch call whose subagent copies the
	// notes with the shell first (a permission request), behind Marker.
	ShellTask = Marker + " " + shellPrompt
	// reportFinal is the main agent's answer, relaying the subagent's.
	reportFinal = "The subagent reports: " + NotesFirstLine
	// readPrompt is the task the main agent hands its subagent.
	readPrompt = "Read the file notes.txt in the workspace and report its first line."
	// shellPrompt is the task of a subagent that uses the shell.
	shellPrompt = "[use-shell] Copy notes.txt to notes-copy.txt with the shell, then read it and report its first line."
)

// launchArgs are the usual arguments of a subagent launch of the notes
// task: the description, the prompt (behind Marker) and the subagent
// type, with a vendor's own (its background flag) from extra.
func launchArgs(subagentType, prompt string, extra map[string]any) map[string]any {
	args := map[string]any{
		"description":   "Read notes file",
		"prompt":        Marker + " " + prompt,
		"subagent_type": subagentType,
	}
	maps.Copy(args, extra)
	return args
}

// Scenario is one recordable session: the model script and the prompt.
type Scenario struct {
	Script *fakemodel.Script
	Prompt string
}

// Params are what a script needs to know about the run.
type Params struct {
	// Workspace is the session's cwd (absolute), for tool arguments
	// that take absolute paths.
	Workspace string
}

// Delegation describes the usual script: the main agent calls LaunchTool
// once, the subagent takes ChildSteps one by one, then each side answers
// with text.
type Delegation struct {
	// Extra rules are tried first (classifier or title requests).
	Extra []fakemodel.Rule
	// LaunchTool and LaunchArgs are the main agent's subagent call.
	LaunchTool string
	LaunchArgs any
	// ChildSteps are the subagent's tool turns in order.
	ChildSteps []fakemodel.Turn
	// ChildFinal and MainFinal are the closing texts.
	ChildFinal, MainFinal string
	// HandbackTool, when the subagent's request offers it, delivers
	// ChildFinal as the tool argument HandbackArg instead of as text
	// (Claude Code's SubagentHandback: plain final text is not delivered).
	HandbackTool, HandbackArg string
}

// IsSubagent reports whether a request comes from a scripted subagent.
func IsSubagent(req *fakemodel.Request) bool {
	return strings.Contains(req.FirstUserText(), Marker)
}

// Script builds the rules.
func (d Delegation) Script() *fakemodel.Script {
	launch := fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{{Name: d.LaunchTool, Args: mustJSON(d.LaunchArgs)}}}
	rules := append([]fakemodel.Rule(nil), d.Extra...)
	rules = append(rules,
		fakemodel.Rule{
			Name: "sub:step",
			When: func(r *fakemodel.Request) bool { return IsSubagent(r) && r.ToolTurns() < len(d.ChildSteps) },
			Reply: func(r *fakemodel.Request) fakemodel.Turn {
				return cloneTurn(d.ChildSteps[r.ToolTurns()])
			},
		},
		fakemodel.Rule{
			Name: "sub:handback",
			When: func(r *fakemodel.Request) bool {
				return d.HandbackTool != "" && IsSubagent(r) && r.HasTool(d.HandbackTool) &&
					!slices.Contains(r.CalledTools(), d.HandbackTool)
			},
			Reply: func(*fakemodel.Request) fakemodel.Turn {
				return call(d.HandbackTool, map[string]any{d.HandbackArg: d.ChildFinal})
			},
		},
		fakemodel.Rule{
			Name:  "sub:final",
			When:  IsSubagent,
			Reply: func(*fakemodel.Request) fakemodel.Turn { return fakemodel.Turn{Text: d.ChildFinal} },
		},
		fakemodel.Rule{
			Name: "main:launch",
			When: func(r *fakemodel.Request) bool {
				return r.HasTool(d.LaunchTool) && !slices.Contains(r.CalledTools(), d.LaunchTool)
			},
			Reply: func(*fakemodel.Request) fakemodel.Turn { return cloneTurn(launch) },
		},
		fakemodel.Rule{
			Name:  "main:final",
			When:  func(r *fakemodel.Request) bool { return slices.Contains(r.CalledTools(), d.LaunchTool) },
			Reply: func(*fakemodel.Request) fakemodel.Turn { return fakemodel.Turn{Text: d.MainFinal} },
		},
	)
	return &fakemodel.Script{Rules: rules}
}

// call is a one-tool-call turn.
func call(name string, args any) fakemodel.Turn {
	return fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{{Name: name, Args: mustJSON(args)}}}
}

// cloneTurn copies a turn so the server can fill in ids.
func cloneTurn(t fakemodel.Turn) fakemodel.Turn {
	t.ToolCalls = slices.Clone(t.ToolCalls)
	return t
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // scripts are literals: a failure is a programming error
	}
	return b
}

// textRule answers requests whose system prompt or last user message
// contains needle with a fixed text.
func textRule(name, needle, text string) fakemodel.Rule {
	return fakemodel.Rule{
		Name: name,
		When: func(r *fakemodel.Request) bool {
			return strings.Contains(r.System, needle) || strings.Contains(r.LastUserText(), needle)
		},
		Reply: func(*fakemodel.Request) fakemodel.Turn { return fakemodel.Turn{Text: text} },
	}
}

// fakemodelRule is a short name for the vendor files' rule lists.
type fakemodelRule = fakemodel.Rule

// steps lists tool turns.
func steps(turns ...fakemodel.Turn) []fakemodel.Turn { return turns }

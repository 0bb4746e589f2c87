package opencode_test

import (
	"path/filepath"
	"testing"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
	"github.com/acp-normalize/acp-normalize/proxy/proxytest"
	"github.com/acp-normalize/acp-normalize/rewrite/opencode"
)

// capturesDir holds the real OpenCode 1.18.33 recordings (rule V9; see
// its README for how they were made).
var capturesDir = filepath.Join("..", "..", "testdata", "captures", "opencode")

const (
	prompt      = "[subtask-marker] Read the file notes.txt in the workspace and report its first line."
	shellPrompt = "[subtask-marker] [use-shell] Copy notes.txt to notes-copy.txt with the shell, then read it and report its first line."
	firstLine   = "First line of notes.txt: alpha: the first line of the notes file"
)

// captureCases are the hand-checked results of each recording: the last
// snapshot of its task call, which is every field OpenCode's data holds
// (V2). OpenCode forwards no child frames, so nothing is linked (V4).
var captureCases = map[string]proxytest.CaptureWant{
	"foreground.jsonl": {Snapshots: map[string]map[string]any{"*/*": {
		"vendor": "opencode", "toolName": "task", "description": "Read notes file", "prompt": prompt,
		"subagentType": "general", "status": "completed", "resultText": firstLine,
		"resolvedModel": "fake/fake-model", "childSessionId": proxytest.Any,
	}}},
	"subagents.jsonl": {Snapshots: map[string]map[string]any{"*/*": {
		"vendor": "opencode", "toolName": "task", "description": "Read notes file", "prompt": prompt,
		"subagentType": "general", "status": "completed", "resultText": firstLine,
		"resolvedModel": "fake/fake-model", "childSessionId": proxytest.Any,
	}}},
	"background.jsonl": {Snapshots: map[string]map[string]any{"*/*": {
		"vendor": "opencode", "toolName": "task", "description": "Read notes file", "prompt": prompt,
		"subagentType": "general", "background": true, "status": "launched", "agentId": proxytest.Any,
		"resolvedModel": "fake/fake-model", "childSessionId": proxytest.Any,
	}}},
	"permission.jsonl": {Snapshots: map[string]map[string]any{"*/*": {
		"vendor": "opencode", "toolName": "task", "description": "Read notes file", "prompt": shellPrompt,
		"subagentType": "general", "status": "failed",
		"resolvedModel": "fake/fake-model", "childSessionId": proxytest.Any,
	}}},
}

// TestCaptures replays every real recording through the opencode module
// (proxytest.CheckCapture, and the .replay.jsonl golden beside it: P1, M, V2, V3, V5) and fails on a recording
// without a case.
func TestCaptures(t *testing.T) {
	cases := map[string]proxytest.CaptureWant{}
	for name, want := range captureCases {
		want.Launch = isLaunch // V2: every frame of the launch call carries the snapshot
		cases[name] = want
	}
	proxytest.CheckCaptures(t, capturesDir, opencode.Module(), cases)
}

// isLaunch: an OpenCode launch call is the tool call whose first title is
// task (docs/opencode.md).
func isLaunch(obj []byte) bool {
	tag, _ := rawjson.LookupString(obj, "sessionUpdate")
	title, _ := rawjson.LookupString(obj, "title")
	return tag == "tool_call" && title == "task"
}

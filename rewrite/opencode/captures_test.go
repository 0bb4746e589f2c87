package opencode_test

import (
	"path/filepath"
	"testing"

	"github.com/acp-normalize/acp-normalize/capture/scenario"
	"github.com/acp-normalize/acp-normalize/internal/rawjson"
	"github.com/acp-normalize/acp-normalize/rewrite/opencode"
	"github.com/acp-normalize/acp-normalize/route/routetest"
)

// capturesDir holds the real OpenCode 1.18.33 recordings (rule V9; see
// its README for how they were made).
var capturesDir = filepath.Join("..", "..", "testdata", "captures", "opencode")

// captureCases are the hand-checked results of each recording: the last
// snapshot of its task call, which is every field OpenCode's data holds
// (V2). OpenCode forwards no child frames, so nothing is linked (V4).
var captureCases = map[string]routetest.CaptureWant{
	"foreground.jsonl": {Snapshots: routetest.OneLaunch(launched(scenario.ReadTask), finished())},
	"subagents.jsonl":  {Snapshots: routetest.OneLaunch(launched(scenario.ReadTask), finished())},
	"background.jsonl": {Snapshots: routetest.OneLaunch(launched(scenario.ReadTask),
		map[string]any{"background": true, "status": "launched", "agentId": routetest.Any})},
	"permission.jsonl": {Snapshots: routetest.OneLaunch(launched(scenario.ShellTask), map[string]any{"status": "failed"})},
}

// finished is what a foreground launch says when it is done.
func finished() map[string]any {
	return map[string]any{"status": "completed", "resultText": scenario.ChildFinal}
}

// launched are the fields of every recording's launch call of prompt.
func launched(prompt string) map[string]any {
	return map[string]any{"vendor": "opencode", "toolName": "task", "description": "Read notes file", "prompt": prompt,
		"subagentType": "general", "resolvedModel": "fake/fake-model", "childSessionId": routetest.Any}
}

// TestCaptures replays every real recording through the opencode module
// (routetest.CheckCapture, and the .replay.jsonl golden beside it: P1, M, V2, V3, V5) and fails on a recording
// without a case.
func TestCaptures(t *testing.T) {
	routetest.CheckCaptures(t, capturesDir, opencode.Module(), isLaunch, captureCases)
}

// isLaunch: an OpenCode launch call is the tool call whose first title is
// task (docs/opencode.md).
func isLaunch(obj []byte) bool {
	tag, _ := rawjson.LookupString(obj, "sessionUpdate")
	title, _ := rawjson.LookupString(obj, "title")
	return tag == "tool_call" && title == "task"
}

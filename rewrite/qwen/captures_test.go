package qwen_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/acp-normalize/acp-normalize/capture/scenario"
	"github.com/acp-normalize/acp-normalize/internal/rawjson"
	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite/qwen"
	"github.com/acp-normalize/acp-normalize/route/routetest"
)

// capturesDir holds the real Qwen Code 0.24.4 recordings (rule V9; see
// its README for how they were made).
var capturesDir = filepath.Join("..", "..", "testdata", "captures", "qwen")

// captureCases are the hand-checked results of each recording: the
// last snapshot of its launch call, which is every field Qwen's data
// holds (V2), and the frames linked to it (V4).
var captureCases = map[string]routetest.CaptureWant{
	// two usage chunks, the read_file call and its update, the answer chunk
	"foreground.jsonl": {Snapshots: routetest.OneLaunch(launched(), finished(scenario.ReadTask, 240, 1)), Parents: map[string]int{"*": 5}},
	"subagents.jsonl":  {Snapshots: routetest.OneLaunch(launched(), finished(scenario.ReadTask, 240, 1)), Parents: map[string]int{"*": 5}},
	"background.jsonl": {
		Snapshots: routetest.OneLaunch(launched(), map[string]any{"prompt": scenario.ReadTask, "agentId": routetest.Any, "background": true, "status": "completed"}),
		Emits:     1, // V5: the first backgroundTask chunk completes the launch
		Check:     backgroundAgentID,
	},
	// the shell call, its permission request and updates, the read_file
	// call and its update, chunks
	"permission.jsonl": {Snapshots: routetest.OneLaunch(launched(), finished(scenario.ShellTask, 360, 2)), Parents: map[string]int{"*": 9}},
}

// launched are the fields of every recording's launch call.
func launched() map[string]any {
	return map[string]any{"vendor": "qwen", "toolName": "agent", "description": "Read notes file", "subagentType": "general-purpose"}
}

// finished is what a foreground launch of prompt says when it is done.
func finished(prompt string, tokens, tools float64) map[string]any {
	return map[string]any{"prompt": prompt, "background": false, "status": "completed", "durationMs": routetest.Any,
		"resultText": scenario.ChildFinal, "totalTokens": tokens, "toolUseCount": tools}
}

// TestCaptures replays every real recording through the qwen module
// (routetest.CheckCapture, and the .replay.jsonl golden beside it: P1, M, V2-V5) and fails on a recording
// without a case.
func TestCaptures(t *testing.T) {
	routetest.CheckCaptures(t, capturesDir, qwen.Module(), isLaunch, captureCases)
}

// isLaunch: a Qwen launch call is a tool call whose _meta.toolName is
// agent (task in older versions), on every frame of it (docs/qwen.md).
func isLaunch(obj []byte) bool {
	name, _ := rawjson.LookupString(obj, "_meta", "toolName")
	return name == "agent" || name == "task"
}

// backgroundAgentID: Qwen names a background subagent after its type and
// its launch call ("general-purpose-<toolCallId>"), whatever ids a
// recording has.
func backgroundAgentID(t *testing.T, _ []pipe.Record, outs []routetest.Output) {
	for key, snap := range routetest.Snapshots(t, outs) {
		_, id, _ := strings.Cut(key, "/")
		if want := snap["subagentType"].(string) + "-" + id; snap["agentId"] != want {
			t.Errorf("%s: agentId %v, want %s", key, snap["agentId"], want)
		}
	}
}

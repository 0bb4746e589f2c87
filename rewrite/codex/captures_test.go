package codex_test

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/acp-normalize/acp-normalize/capture/scenario"
	"github.com/acp-normalize/acp-normalize/internal/rawjson"
	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite/codex"
	"github.com/acp-normalize/acp-normalize/route/routetest"
)

// capturesDir holds every vendor's whole-session captures; the Codex ones
// are real recordings (testdata/captures/codex/README.md).
var capturesDir = filepath.Join("..", "..", "testdata", "captures")

const (
	prompt    = scenario.ReadTask
	firstLine = scenario.ChildFinal
)

// captureCases are the hand-checked results of each real Codex recording:
// the last snapshot of its spawnAgent call, whatever ids the recording
// has; the child's thread id is checked against the recording
// (childThread).
var captureCases = map[string]routetest.CaptureWant{
	"foreground.jsonl": { // spawnAgent, then wait: the result is in the wait call (V5)
		Snapshots: map[string]map[string]any{"*/*": {
			"vendor": "codex", "toolName": "spawnAgent", "prompt": prompt, "model": "gpt-5.5", "effort": "medium",
			"agentId": routetest.Any, "background": true, "status": "completed", "resultText": firstLine,
			"raw": map[string]any{"agentStatus": "completed"},
		}},
		Emits: 1,
	},
	"background.jsonl": { // no wait: launched, and Codex never reports the end
		Snapshots: map[string]map[string]any{"*/*": {
			"vendor": "codex", "toolName": "spawnAgent", "prompt": prompt, "model": "gpt-5.5", "effort": "medium",
			"agentId": routetest.Any, "background": true, "status": "launched",
			"raw": map[string]any{"agentStatus": "pendingInit"},
		}},
	},
	"permission.jsonl": { // the child's permission request has no link: nothing guessed (V4)
		Snapshots: map[string]map[string]any{"*/*": {
			"vendor": "codex", "toolName": "spawnAgent", "prompt": prompt, "model": "gpt-5.5", "effort": "medium",
			"agentId": routetest.Any, "background": true, "status": "completed", "resultText": firstLine,
			"raw": map[string]any{"agentStatus": "completed"},
		}},
		Emits: 1,
	},
	"subagents.jsonl": {}, // standard subagent sessions, no spawnAgent call (V8)
}

// TestCaptures replays each real Codex recording through a Router with the
// codex module (routetest.CheckCaptures: P1, P3, M, V2-V5, and the
// .replay.jsonl golden beside the capture, -update rewrites it); the
// frames it adds are launch-call updates without an ACP status (V5, P4)
// and the snapshot's agentId is the child's thread.
func TestCaptures(t *testing.T) {
	cases := map[string]routetest.CaptureWant{}
	for name, want := range captureCases {
		want.Check = checkCodex
		cases[name] = want
	}
	routetest.CheckCaptures(t, filepath.Join(capturesDir, "codex"), codex.Module(), isLaunch, cases)
}

// isLaunch: a Codex launch call is the tool call titled spawnAgent
// (docs/codex.md).
func isLaunch(obj []byte) bool {
	tag, _ := rawjson.LookupString(obj, "sessionUpdate")
	title, _ := rawjson.LookupString(obj, "title")
	return tag == "tool_call" && title == "spawnAgent"
}

// checkCodex checks the emitted frames (tool_call_updates without an
// ACP status, P4) and each snapshot's agentId against the recording.
func checkCodex(t *testing.T, recs []pipe.Record, outs []routetest.Output) {
	for i, o := range outs {
		if o.Op != pipe.OpEmit {
			continue
		}
		if tag, _ := rawjson.LookupString(o.Frame, "params", "update", "sessionUpdate"); tag != "tool_call_update" {
			t.Errorf("output %d: emitted %s", i+1, o.Frame)
		}
		if _, ok := rawjson.Lookup(o.Frame, "params", "update", "status"); ok {
			t.Errorf("output %d: an emitted update carries an ACP status (P4): %s", i+1, o.Frame)
		}
	}
	for key, snap := range routetest.Snapshots(t, outs) {
		if want := childThread(recs, key); snap["agentId"] != want {
			t.Errorf("%s: agentId %v, want the child's thread %q", key, snap["agentId"], want)
		}
	}
}

// childThread returns the thread Codex spawned for the launch call key
// ("sessionId/toolCallId"): the first receiverThreadIds entry of its
// frames.
func childThread(recs []pipe.Record, key string) string {
	for _, rec := range recs {
		update, ok := rawjson.Lookup(rec.Frame, "params", "update")
		if rec.From != pipe.Agent || !ok {
			continue
		}
		session, _ := rawjson.LookupString(rec.Frame, "params", "sessionId")
		id, _ := rawjson.LookupString(update, "toolCallId")
		if session+"/"+id != key {
			continue
		}
		var children []string
		if raw, ok := rawjson.Lookup(update, "rawInput", "receiverThreadIds"); ok && json.Unmarshal(raw, &children) == nil && len(children) > 0 {
			return children[0]
		}
	}
	return ""
}

// TestOtherVendors: on every other vendor's capture the module changes
// nothing (V1), byte for byte.
func TestOtherVendors(t *testing.T) {
	routetest.NothingOnOthers(t, capturesDir, codex.Module())
}

package claude_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/acp-normalize/acp-normalize/proxy/proxytest"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/rewrite/rewritetest"
)

// capturesDir holds the whole-session Claude captures (the Claude section
// of testdata/captures/README.md gives their provenance).
var capturesDir = filepath.Join("..", "..", "testdata", "captures", "claude")

// sharedCapturesDir is where the real adapter captures were delivered.
var sharedCapturesDir = filepath.Join("..", "..", "..", "shared", "captures", "claude")

// captureCase is what a whole-session capture must show after the module.
type captureCase struct {
	file string
	// snapshots: the last snapshot of each launch call, by
	// "sessionId/toolCallId".
	snapshots map[string]map[string]any
	// parents: how many frames get parentToolCallId, by its value.
	parents map[string]int
}

var captureCases = []captureCase{
	{
		file: "flat-foreground.jsonl", // real, adapter 0.101.0: toolResponse frame first, handback report
		snapshots: map[string]map[string]any{
			"e4e985fb-6247-4e2e-9356-70fcd4544120/toolu_01Fake000004": {
				"vendor": "claude", "toolName": "Agent", "description": "Read notes file",
				"prompt":       "[subtask-marker] Read the file notes.txt in the workspace and report its first line.",
				"subagentType": "general-purpose", "agentId": "a1f94640b7cfb98ba", "background": false,
				"status": "completed", "durationMs": 751.0,
				"resultText":  "First line of notes.txt: alpha: the first line of the notes file",
				"totalTokens": 120.0, "toolUseCount": 2.0, "resolvedModel": "claude-opus-5-5",
			},
		},
		parents: map[string]int{"toolu_01Fake000004": 6}, // Read x3, SubagentHandback x3
	},
	{
		file: "flat-permission.jsonl", // real: the subagent's Bash call asks for permission
		snapshots: map[string]map[string]any{
			"63bce315-c4dd-46b8-b0fa-294076f62228/toolu_01Fake000004": {
				"vendor": "claude", "toolName": "Agent", "description": "Read notes file",
				"prompt":       "[subtask-marker] [use-bash] Read the file notes.txt in the workspace, copy it to notes-copy.txt, and report its first line.",
				"subagentType": "general-purpose", "agentId": "a8665b69722719b5e", "background": false,
				"status": "completed", "durationMs": 987.0,
				"resultText":  "First line of notes.txt: alpha: the first line of the notes file", // L8: without the tag
				"totalTokens": 120.0, "toolUseCount": 2.0, "resolvedModel": "claude-opus-5-5",
			},
		},
		parents: map[string]int{"toolu_01Fake000004": 7}, // Read x3, Bash x3, the permission request
	},
	{
		file:      "native.jsonl", // real: standard subagent sessions, no launch tool call at all
		snapshots: map[string]map[string]any{},
		parents:   map[string]int{"toolu_01Fake000004": 5}, // child config update, chunk, Read x3
	},
	{
		file: "rig-foreground.jsonl", // real, recorded with the capture rig (make captures VENDOR=claude)
		snapshots: map[string]map[string]any{
			"c3d0594d-225b-4240-bc04-1b2119c4d22f/toolu_01Fake000002": {
				"vendor": "claude", "toolName": "Agent", "description": "Read notes file",
				"prompt":       "[subtask-marker] Read the file notes.txt in the workspace and report its first line.",
				"subagentType": "general-purpose", "agentId": "a59ae5bb2a7b050f0", "background": false,
				"status": "completed", "durationMs": 838.0,
				"resultText":  "First line of notes.txt: alpha: the first line of the notes file",
				"totalTokens": 120.0, "toolUseCount": 2.0, "resolvedModel": "claude-opus-5-5",
			},
		},
		parents: map[string]int{"toolu_01Fake000002": 6}, // Read x3, SubagentHandback x3
	},
	{
		file: "rig-background.jsonl", // real, rig: no run_in_background, an async launch, the hand-back (L7)
		snapshots: map[string]map[string]any{
			"4acf40ce-c996-446e-b3a2-1961d423b047/toolu_01Fake000002": {
				"vendor": "claude", "toolName": "Agent", "description": "Read notes file",
				"prompt":       "[subtask-marker] Read the file notes.txt in the workspace and report its first line.",
				"subagentType": "general-purpose", "agentId": "a16360194e7375609", "background": true,
				"status": "completed", "resolvedModel": "claude-opus-5-5",
				"resultText": "First line of notes.txt: alpha: the first line of the notes file",
				"outputFile": "/tmp/acp-capture/claude/tmp/claude-0/-tmp-acp-capture-claude-ws/4acf40ce-c996-446e-b3a2-1961d423b047/tasks/a16360194e7375609.output",
				"raw":        map[string]any{"toolResponseStatus": "async_launched"},
			},
		},
		parents: map[string]int{"toolu_01Fake000002": 6}, // Read x3, SubagentHandback x3, after the launch completed
	},
	{
		file: "rig-permission.jsonl", // real, rig: mode default, the subagent's Bash asks
		snapshots: map[string]map[string]any{
			"b6d728b5-5e50-4e44-b6aa-2ed6641f9e64/toolu_01Fake000002": {
				"vendor": "claude", "toolName": "Agent", "description": "Read notes file",
				"prompt":       "[subtask-marker] [use-bash] Copy notes.txt to notes-copy.txt with Bash, then read it and report its first line.",
				"subagentType": "general-purpose", "agentId": "afd9b95f1c7356375", "background": false,
				"status": "completed", "durationMs": 1471.0,
				"resultText":  "First line of notes.txt: alpha: the first line of the notes file", // L8: without the tag
				"totalTokens": 120.0, "toolUseCount": 2.0, "resolvedModel": "claude-opus-5-5",
			},
		},
		parents: map[string]int{"toolu_01Fake000002": 7}, // Bash x3, the permission request, Read x3
	},
	{
		file:      "rig-subagents.jsonl", // real, rig: clientCapabilities.subagents, native child sessions
		snapshots: map[string]map[string]any{},
		parents:   map[string]int{"toolu_01Fake000002": 4}, // child config update, Read x3
	},
	{
		file: "flat-background-default.jsonl", // hand-written: async launch, no run_in_background
		snapshots: map[string]map[string]any{
			"hw-background-0001/toolu_01HandBg000004": {
				"vendor": "claude", "toolName": "Agent", "description": "Watch build log",
				"prompt":       "[subtask-marker] Watch the build log and report the first error.",
				"subagentType": "general-purpose", "agentId": "a5e0c1d2b3a49f8e7", "background": true,
				"status":     "launched",
				"outputFile": "/tmp/hw/agents/a5e0c1d2b3a49f8e7.output",
				"raw":        map[string]any{"toolResponseStatus": "async_launched"},
			},
		},
		parents: map[string]int{"toolu_01HandBg000004": 3}, // Read x3, after the launch call completed
	},
	{
		file: "flat-background.jsonl", // real: run_in_background:true, hand-back on a usage_update (L7)
		snapshots: map[string]map[string]any{
			"fa3ff9ed-6307-4909-8d41-97a531455acb/toolu_01Fake000004": {
				"vendor": "claude", "toolName": "Agent", "description": "Read notes file",
				"prompt":       "[subtask-marker] Read the file notes.txt in the workspace and report its first line.",
				"subagentType": "general-purpose", "agentId": "a98d117ea0a8fe889", "background": true,
				"status":        "completed",
				"resultText":    "First line of notes.txt: alpha: the first line of the notes file",
				"resolvedModel": "claude-opus-5-5",
				"outputFile":    "/tmp/claude-0/-tmp-claude-capture-ws/fa3ff9ed-6307-4909-8d41-97a531455acb/tasks/a98d117ea0a8fe889.output",
				"raw":           map[string]any{"toolResponseStatus": "async_launched"},
			},
		},
		parents: map[string]int{"toolu_01Fake000004": 6}, // Read x3, SubagentHandback x3, after the launch completed
	},
	{
		file: "flat-task-older-order.jsonl", // hand-written: "Task", completed frame before toolResponse
		snapshots: map[string]map[string]any{
			"hw-older-order-0001/toolu_01HandOld000004": {
				"vendor": "claude", "toolName": "Task", "description": "Count Go files",
				"prompt":       "Count the .go files under ./proxy and name the largest.",
				"subagentType": "Explore", "model": "haiku", "effort": "low", "agentId": "ab12cd34ef56ab78c",
				"background": false, "status": "completed", "durationMs": 5310.0,
				"resultText":  "There are 2 .go files under ./proxy; router.go is the largest.",
				"totalTokens": 2048.0, "toolUseCount": 1.0,
			},
		},
		parents: map[string]int{"toolu_01HandOld000004": 4}, // chunk, Glob x2, chunk
	},
}

// TestCaptures runs each whole-session capture through a Router with the
// claude module and checks it against its golden output and the rules:
//
//   - every output line is JSON;
//   - P1/L5: a frame without "claudeCode" leaves byte for byte as it came
//     in, and a changed frame differs from what a module-less run writes
//     only by the "acp-normalize" member of the _meta it describes;
//   - L3: every launch-call frame to the client carries the snapshot, and
//     the last snapshot of each call is the expected one;
//   - L4: exactly the frames with parentToolUseId get parentToolCallId,
//     with the same value (native subagent_update/session_message never).
func TestCaptures(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(capturesDir, "*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	covered := map[string]bool{}
	for _, tc := range captureCases {
		covered[tc.file] = true
	}
	for _, f := range files {
		if !covered[filepath.Base(f)] {
			t.Errorf("capture %s has no case in captureCases", filepath.Base(f))
		}
	}
	for _, tc := range captureCases {
		t.Run(strings.TrimSuffix(tc.file, ".jsonl"), func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(capturesDir, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			recs := proxytest.ReadRecords(t, data)
			all := proxytest.Route(t, recs, nil, claudeModule())
			plain := proxytest.Route(t, recs, nil, identityModule())
			// The frames the module adds are the launch calls' updates of
			// L7 (L6's are the sessions module's, S8); every other output
			// matches one without the module.
			var outs []proxytest.Output
			for _, o := range all {
				if o.Op == pipe.OpEmit {
					checkLaunchUpdate(t, rewrite.Output{To: o.To, Frame: o.Frame})
					continue
				}
				outs = append(outs, o)
			}
			if len(outs) != len(plain) {
				t.Fatalf("%d outputs with the module, %d without: the module must never drop frames", len(outs), len(plain))
			}
			parents := map[string]int{}
			for i, o := range outs {
				checkCaptureOutput(t, i+1, o, plain[i], parents)
			}
			if !reflect.DeepEqual(parents, tc.parents) {
				t.Errorf("frames with parentToolCallId: got %v, want %v", parents, tc.parents)
			}
			got := proxytest.Snapshots(t, all)
			if !reflect.DeepEqual(got, tc.snapshots) {
				g, _ := json.MarshalIndent(got, "", "  ")
				w, _ := json.MarshalIndent(tc.snapshots, "", "  ")
				t.Errorf("last snapshots:\ngot  %s\nwant %s", g, w)
			}
			golden := filepath.Join("testdata", "captures", strings.TrimSuffix(tc.file, ".jsonl")+".out.jsonl")
			rewritetest.CheckFile(t, golden, proxytest.Format(all))
		})
	}
}

// checkCaptureOutput checks one output against the same output without the
// module, and counts parent links by value.
func checkCaptureOutput(t *testing.T, n int, o, plain proxytest.Output, parents map[string]int) {
	t.Helper()
	if !json.Valid(o.Frame) {
		t.Errorf("output %d is not JSON: %s", n, o.Frame)
	}
	if o.To != plain.To || o.In.Seq != plain.In.Seq {
		t.Fatalf("output %d goes elsewhere with the module", n)
	}
	if !bytes.Contains(o.In.Frame, []byte("claudeCode")) {
		if !bytes.Equal(o.Frame, o.In.Frame) || !bytes.Equal(o.Frame, plain.Frame) || o.Op != "" {
			t.Errorf("output %d: a frame without claudeCode was changed:\n%s\n%s", n, o.In.Frame, o.Frame)
		}
		return
	}
	obj := proxytest.Described(o.Frame)
	path := metaPath(o.Frame)
	if !bytes.Equal(o.Frame, plain.Frame) {
		if path == nil {
			t.Fatalf("output %d changed, but it is no session/update or permission request: %s", n, o.Frame)
		}
		back, err := rawjson.Delete(o.Frame, path...)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(back, plain.Frame) {
			t.Errorf("output %d differs by more than _meta[\"acp-normalize\"] (L5):\n%s\n%s", n, plain.Frame, o.Frame)
		}
	}
	if obj == nil || o.To != pipe.Client {
		return
	}
	tag, _ := rawjson.LookupString(obj, "sessionUpdate")
	native := tag == "subagent_update" || tag == "session_message"
	toolName, _ := rawjson.LookupString(obj, "_meta", "claudeCode", "toolName")
	_, hasSnap := metaValue(obj, "subagent")
	if launch := toolName == "Agent" || toolName == "Task"; launch != hasSnap {
		t.Errorf("output %d: launch call %v, snapshot %v (L3): %s", n, launch, hasSnap, o.Frame)
	}
	want, wantOK := rawjson.Lookup(obj, "_meta", "claudeCode", "parentToolUseId")
	got, gotOK := metaValue(obj, "parentToolCallId")
	if native {
		wantOK = false
	}
	if wantOK != gotOK || !bytes.Equal(want, got) {
		t.Errorf("output %d: parentToolUseId %s, parentToolCallId %s (L4)", n, want, got)
	}
	if gotOK {
		var p string
		_ = json.Unmarshal(got, &p)
		parents[p]++
	}
}

// identityModule has the claude module's name and triggers but forwards
// every frame unchanged: the baseline that isolates the module's effect
// (the router's own initialize advertisement is the same in both runs).
func identityModule() rewrite.Module {
	m := claudeModule()
	m.New = func(rewrite.Env) rewrite.Rewriter { return identity{} }
	return m
}

type identity struct{}

func (identity) Rewrite(*rewrite.Frame) (rewrite.Verdict, error) { return rewrite.Verdict{}, nil }

// metaPath is the path of the "acp-normalize" member the module may add.
func metaPath(frame []byte) []string {
	env := pipe.Peek(frame)
	switch {
	case env.MethodIs("session/update"):
		return []string{"params", "update", "_meta", "acp-normalize"}
	case env.MethodIs("session/request_permission"):
		return []string{"params", "toolCall", "_meta", "acp-normalize"}
	}
	return nil
}

// deliveredCaptures are the sha256 sums of the real adapter captures as
// they were delivered (shared/captures/claude of the project's steering
// folder, 2026-11-29): the copies under testdata must stay those bytes.
var deliveredCaptures = map[string]string{
	"flat-background.jsonl": "9e7b2e28c422c9ca197ebb4e1edcfe892fd50e1828a4bf524b10af148581436b",
	"flat-foreground.jsonl": "7e157fa33826d7fdf113adc525299d97c0bb31a2aac1bed4c1940b27090b397c",
	"flat-permission.jsonl": "bb8d1e8c4eb40dc905517814c289628a9cf97365d9f51b0e967c619d80eda4d2",
	"native.jsonl":          "ab097632df24478ad346d91737842a58e85baad91c09bea6f949233390c2c490",
}

// TestCapturesProvenance checks that the real captures under testdata are
// unchanged copies of the ones delivered, by their recorded sums; where
// the delivery folder is next to the repository, it also checks that the
// delivery did not change since (a newer one must be copied in).
func TestCapturesProvenance(t *testing.T) {
	for name, want := range deliveredCaptures {
		for _, dir := range []string{capturesDir, sharedCapturesDir} {
			data, err := os.ReadFile(filepath.Join(dir, name))
			if dir == sharedCapturesDir && os.IsNotExist(err) {
				continue // a clone without the delivery folder: the sums suffice
			}
			if err != nil {
				t.Errorf("real capture %s: %v", name, err)
				continue
			}
			sum := sha256.Sum256(data)
			if got := hex.EncodeToString(sum[:]); got != want {
				t.Errorf("%s: sha256 %s, delivered %s", filepath.Join(dir, name), got, want)
			}
		}
	}
}

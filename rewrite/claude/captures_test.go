package claude_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acp-normalize/acp-normalize/capture/scenario"
	"github.com/acp-normalize/acp-normalize/internal/rawjson"
	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/rewrite/rewritetest"
	"github.com/acp-normalize/acp-normalize/route/routetest"
)

// capturesDir holds the whole-session Claude captures (the Claude section
// of testdata/captures/README.md gives their provenance).
var capturesDir = filepath.Join("..", "..", "testdata", "captures", "claude")

// sharedCapturesDir is where the real adapter captures were delivered.
var sharedCapturesDir = filepath.Join("..", "..", "..", "shared", "captures", "claude")

// captureCase is what a whole-session capture must show after the module.
type captureCase struct {
	file string
	want routetest.CaptureWant
}

// captureCases: the rig-* recordings (capture/agents/claude.sh) name no
// id or timing a re-recording changes ("*/*", "*", Any; checkClaude
// derives the output file from the recording); the flat-* ones are the
// delivered recordings, pinned by TestCapturesProvenance and never
// re-recorded, and the hand-written ones are ours: their cases keep
// exact ids.
var captureCases = []captureCase{
	{
		file: "flat-foreground.jsonl", // real, adapter 0.101.0: toolResponse frame first, handback report
		want: routetest.CaptureWant{Snapshots: map[string]map[string]any{
			"e4e985fb-6247-4e2e-9356-70fcd4544120/toolu_01Fake000004": routetest.Fields(notes(readTask), foreground(),
				map[string]any{"agentId": "a1f94640b7cfb98ba", "durationMs": 751.0}),
		}, Parents: map[string]int{"toolu_01Fake000004": 6}}, // L6 is the sessions module's (S8): nothing emitted here; Read x3, SubagentHandback x3
	},
	{
		file: "flat-permission.jsonl", // real: the subagent's Bash call asks for permission
		want: routetest.CaptureWant{Snapshots: map[string]map[string]any{
			// resultText without the tag (L8)
			"63bce315-c4dd-46b8-b0fa-294076f62228/toolu_01Fake000004": routetest.Fields(
				notes("[subtask-marker] [use-bash] Read the file notes.txt in the workspace, copy it to notes-copy.txt, and report its first line."),
				foreground(), map[string]any{"agentId": "a8665b69722719b5e", "durationMs": 987.0}),
		}, Parents: map[string]int{"toolu_01Fake000004": 7}}, // L6 is the sessions module's (S8): nothing emitted here; Read x3, Bash x3, the permission request
	},
	{
		file: "native.jsonl", // real: standard subagent sessions, no launch tool call at all
		want: routetest.CaptureWant{Snapshots: map[string]map[string]any{},
			Parents: map[string]int{"toolu_01Fake000004": 5}}, // child config update, chunk, Read x3
	},
	{
		file: "rig-foreground.jsonl", // real, recorded with the capture rig (make captures VENDOR=claude)
		want: routetest.CaptureWant{Snapshots: routetest.OneLaunch(notes(readTask), foreground(),
			map[string]any{"agentId": routetest.Any, "durationMs": routetest.Any}),
			Parents: map[string]int{"*": 6}}, // L6 is the sessions module's (S8): nothing emitted here; Read x3, SubagentHandback x3
	},
	{
		file: "rig-background.jsonl", // real, rig: no run_in_background, an async launch, the hand-back (L7)
		want: routetest.CaptureWant{Snapshots: routetest.OneLaunch(notes(readTask), background(),
			map[string]any{"status": "completed", "resultText": firstLine, "agentId": routetest.Any, "outputFile": routetest.Any}),
			Parents: map[string]int{"*": 6}, Emits: 1}, // Read x3, SubagentHandback x3, after the launch completed
	},
	{
		file: "rig-permission.jsonl", // real, rig: mode default, the subagent's Bash asks; resultText without the tag (L8)
		want: routetest.CaptureWant{Snapshots: routetest.OneLaunch(
			notes("[subtask-marker] [use-bash] Copy notes.txt to notes-copy.txt with Bash, then read it and report its first line."),
			foreground(), map[string]any{"agentId": routetest.Any, "durationMs": routetest.Any}),
			Parents: map[string]int{"*": 7}}, // L6 is the sessions module's (S8): nothing emitted here; Bash x3, the permission request, Read x3
	},
	{
		file: "rig-subagents.jsonl", // real, rig: clientCapabilities.subagents, native child sessions
		want: routetest.CaptureWant{Snapshots: map[string]map[string]any{},
			Parents: map[string]int{"*": 4}}, // child config update, Read x3
	},
	{
		file: "flat-background-default.jsonl", // hand-written: async launch, no run_in_background
		want: routetest.CaptureWant{Snapshots: map[string]map[string]any{
			"hw-background-0001/toolu_01HandBg000004": routetest.Fields(background(), map[string]any{
				"vendor": "claude", "toolName": "Agent", "description": "Watch build log",
				"prompt":       "[subtask-marker] Watch the build log and report the first error.",
				"subagentType": "general-purpose", "agentId": "a5e0c1d2b3a49f8e7", "status": "launched",
				"outputFile": "/tmp/hw/agents/a5e0c1d2b3a49f8e7.output",
			}),
		}, Parents: map[string]int{"toolu_01HandBg000004": 3}}, // Read x3, after the launch call completed
	},
	{
		file: "flat-background.jsonl", // real: run_in_background:true, hand-back on a usage_update (L7)
		want: routetest.CaptureWant{Snapshots: map[string]map[string]any{
			"fa3ff9ed-6307-4909-8d41-97a531455acb/toolu_01Fake000004": routetest.Fields(notes(readTask), background(), map[string]any{
				"agentId": "a98d117ea0a8fe889", "status": "completed", "resultText": firstLine,
				"outputFile": "/tmp/claude-0/-tmp-claude-capture-ws/fa3ff9ed-6307-4909-8d41-97a531455acb/tasks/a98d117ea0a8fe889.output",
			}),
		}, Parents: map[string]int{"toolu_01Fake000004": 6}, Emits: 1}, // Read x3, SubagentHandback x3, after the launch completed
	},
	{
		file: "flat-task-older-order.jsonl", // hand-written: "Task", completed frame before toolResponse
		want: routetest.CaptureWant{Snapshots: map[string]map[string]any{
			"hw-older-order-0001/toolu_01HandOld000004": {
				"vendor": "claude", "toolName": "Task", "description": "Count Go files",
				"prompt":       "Count the .go files under ./proxy and name the largest.",
				"subagentType": "Explore", "model": "haiku", "effort": "low", "agentId": "ab12cd34ef56ab78c",
				"background": false, "status": "completed", "durationMs": 5310.0,
				"resultText":  "There are 2 .go files under ./proxy; router.go is the largest.",
				"totalTokens": 2048.0, "toolUseCount": 1.0,
			},
		}, Parents: map[string]int{"toolu_01HandOld000004": 4}}, // chunk, Glob x2, chunk
	},
}

// The notes task of the capture rig's scripts (capture/scenario), which
// the delivered recordings were made with too.
const (
	readTask  = scenario.ReadTask
	firstLine = scenario.ChildFinal
)

// notes are the fields of a launch call of the notes task with prompt.
func notes(prompt string) map[string]any {
	return map[string]any{"vendor": "claude", "toolName": "Agent", "description": "Read notes file", "prompt": prompt,
		"subagentType": "general-purpose", "resolvedModel": "claude-opus-5-5"}
}

// foreground is what a foreground launch says when it is done.
func foreground() map[string]any {
	return map[string]any{"background": false, "status": "completed", "resultText": firstLine,
		"totalTokens": 120.0, "toolUseCount": 2.0}
}

// background is what an asynchronous launch says.
func background() map[string]any {
	return map[string]any{"background": true, "raw": map[string]any{"toolResponseStatus": "async_launched"}}
}

// TestCaptures runs each whole-session capture through a Router with the
// claude module (routetest.CheckCapture: P1, P3, M, and its last
// snapshots and parent links) and checks it against its golden output
// (testdata/captures/<name>.out.jsonl, -update rewrites it) and the
// rules:
//
//   - P1/L5: a frame without "claudeCode" leaves byte for byte as it came
//     in;
//   - L3: every launch-call frame to the client carries the snapshot
//     (CaptureWant.Launch);
//   - L4: exactly the frames with parentToolUseId get parentToolCallId,
//     with the same value (native subagent_update/session_message never);
//   - L6/L7: the frames the module adds are launch-call updates.
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
			want := tc.want
			want.Launch = isLaunch
			want.Check = checkClaude
			if strings.HasPrefix(tc.file, "rig-") {
				want.Check = func(t *testing.T, recs []pipe.Record, outs []routetest.Output) {
					checkClaude(t, recs, outs)
					checkOutputFile(t, outs)
				}
			}
			all := routetest.CheckCapture(t, filepath.Join(capturesDir, tc.file), claudeModule(), want)
			golden := filepath.Join("testdata", "captures", strings.TrimSuffix(tc.file, ".jsonl")+".out.jsonl")
			rewritetest.CheckFile(t, golden, routetest.Format(all))
		})
	}
}

// isLaunch: a Claude launch call is a tool call whose
// _meta.claudeCode.toolName is Agent (Task in older versions).
func isLaunch(obj []byte) bool {
	name, _ := rawjson.LookupString(obj, "_meta", "claudeCode", "toolName")
	return name == "Agent" || name == "Task"
}

// checkClaude checks the rules of the claude module on every output:
// emitted frames are L6/L7 launch updates, a frame without claudeCode
// is unchanged (P1), parent links are the vendor's (L4).
func checkClaude(t *testing.T, _ []pipe.Record, outs []routetest.Output) {
	for i, o := range outs {
		if o.Op == pipe.OpEmit {
			checkLaunchUpdate(t, rewrite.Output{To: o.To, Frame: o.Frame})
			continue
		}
		checkCaptureOutput(t, i+1, o)
	}
}

// checkOutputFile: the rig's Claude Code writes a background subagent's
// output under its session's folder, named after the agent.
func checkOutputFile(t *testing.T, outs []routetest.Output) {
	for key, snap := range routetest.Snapshots(t, outs) {
		file, ok := snap["outputFile"].(string)
		session, _, _ := strings.Cut(key, "/")
		if ok && !strings.HasSuffix(file, "/"+session+"/tasks/"+fmt.Sprint(snap["agentId"])+".output") {
			t.Errorf("%s: outputFile %s names another session or agent", key, file)
		}
	}
}

// checkCaptureOutput checks one output of the module: a frame without
// claudeCode is unchanged, and a parent link is the vendor's.
func checkCaptureOutput(t *testing.T, n int, o routetest.Output) {
	t.Helper()
	if !bytes.Contains(o.In.Frame, []byte("claudeCode")) {
		if !bytes.Equal(o.Frame, o.In.Frame) || o.Op != "" {
			t.Errorf("output %d: a frame without claudeCode was changed:\n%s\n%s", n, o.In.Frame, o.Frame)
		}
		return
	}
	obj := routetest.Described(o.Frame)
	if obj == nil || o.To != pipe.Client {
		return
	}
	tag, _ := rawjson.LookupString(obj, "sessionUpdate")
	native := tag == "subagent_update" || tag == "session_message"
	want, wantOK := rawjson.Lookup(obj, "_meta", "claudeCode", "parentToolUseId")
	got, gotOK := metaValue(obj, "parentToolCallId")
	if native {
		wantOK = false
	}
	if wantOK != gotOK || !bytes.Equal(want, got) {
		t.Errorf("output %d: parentToolUseId %s, parentToolCallId %s (L4)", n, want, got)
	}
}

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
// they were delivered (2026-11-29): the copies under testdata must stay those bytes.
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

// TestCapturesDifferential: every recording, re-encoded and
// with duplicate keys, gets the same verdicts and snapshots.
func TestCapturesDifferential(t *testing.T) {
	routetest.CheckCapturesDifferential(t, capturesDir, claudeModule())
}

package codex_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/proxy/proxytest"
	"github.com/acp-normalize/acp-normalize/rewrite/codex"
	"github.com/acp-normalize/acp-normalize/rewrite/rewritetest"
)

// capturesDir holds every vendor's whole-session captures; the Codex ones
// are real recordings (testdata/captures/codex/README.md).
var capturesDir = filepath.Join("..", "..", "testdata", "captures")

// captureCase is what a real Codex recording must show after the module.
type captureCase struct {
	file string
	// snapshots: the last snapshot of each launch call, by
	// "sessionId/toolCallId".
	snapshots map[string]map[string]any
	// emitted: how many launch-call updates the module adds (V5).
	emitted int
}

const prompt = "[subtask-marker] Read the file notes.txt in the workspace and report its first line."

var captureCases = []captureCase{
	{
		file: "foreground.jsonl", // spawnAgent, then wait: the result is in the wait call (V5)
		snapshots: map[string]map[string]any{
			"01a22f24-bde1-7190-abb1-008e0d791e64/call_fake_000003": {
				"vendor": "codex", "toolName": "spawnAgent", "prompt": prompt, "model": "gpt-5.5", "effort": "medium",
				"agentId": "01a22f24-bf81-71f2-99db-d90053c09c80", "background": true, "status": "completed",
				"resultText": "First line of notes.txt: alpha: the first line of the notes file",
				"raw":        map[string]any{"agentStatus": "completed"},
			},
		},
		emitted: 1,
	},
	{
		file: "background.jsonl", // no wait: launched, and Codex never reports the end
		snapshots: map[string]map[string]any{
			"01a22f24-f436-7260-9a0c-7640fc25cf57/call_fake_000003": {
				"vendor": "codex", "toolName": "spawnAgent", "prompt": prompt, "model": "gpt-5.5", "effort": "medium",
				"agentId": "01a22f24-f753-70a0-8bb5-a4c15fac103b", "background": true, "status": "launched",
				"raw": map[string]any{"agentStatus": "pendingInit"},
			},
		},
	},
	{
		file: "permission.jsonl", // the child's permission request has no link: nothing guessed (V4)
		snapshots: map[string]map[string]any{
			"01a22f25-506d-7001-9afa-c51b6783e9f8/call_fake_000003": {
				"vendor": "codex", "toolName": "spawnAgent", "prompt": prompt, "model": "gpt-5.5", "effort": "medium",
				"agentId": "01a22f25-56b9-7b30-8ddc-1050579ee39d", "background": true, "status": "completed",
				"resultText": "First line of notes.txt: alpha: the first line of the notes file",
				"raw":        map[string]any{"agentStatus": "completed"},
			},
		},
		emitted: 1,
	},
	{
		file:      "subagents.jsonl", // standard subagent sessions, no spawnAgent call (V8)
		snapshots: map[string]map[string]any{},
	},
}

// TestCaptures replays each real Codex recording through a Router with the
// codex module and checks, besides the golden replay (the .replay.jsonl
// beside the capture, -update rewrites it):
//
//   - P1: a frame the module did not claim leaves byte for byte, and a
//     claimed frame differs only by its _meta["acp-normalize"] and, for a
//     spawnAgent title, the V3 title;
//   - V2: every frame to the client of a spawnAgent call carries the
//     snapshot, and each call's last snapshot is the expected one;
//   - V5: the module adds only launch-call updates, as many as expected;
//   - P3: every frame the module writes matches the ACP schema.
func TestCaptures(t *testing.T) {
	files := proxytest.Captures(t, capturesDir, "codex", false)
	var covered []string
	for _, tc := range captureCases {
		covered = append(covered, tc.file)
	}
	for _, f := range files {
		if !slices.Contains(covered, filepath.Base(f)) {
			t.Errorf("capture %s has no case in captureCases", f)
		}
	}
	schema := rewritetest.LoadSchema(t)
	for _, tc := range captureCases {
		t.Run(strings.TrimSuffix(tc.file, ".jsonl"), func(t *testing.T) {
			path := filepath.Join(capturesDir, "codex", tc.file)
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			recs := proxytest.ReadRecords(t, data)
			outs := proxytest.Route(t, recs, nil, codex.Module())
			plain := proxytest.Route(t, recs, nil, proxytest.Inert(codex.Module().Name))
			emitted := 0
			var kept []proxytest.Output
			for i, o := range outs {
				if o.Op == pipe.OpEmit {
					emitted++
					schema.Check(t, o.Frame)
					if tag, _ := rawjson.LookupString(o.Frame, "params", "update", "sessionUpdate"); tag != "tool_call_update" {
						t.Errorf("output %d: emitted %s", i+1, o.Frame)
					}
					if _, ok := rawjson.Lookup(o.Frame, "params", "update", "status"); ok {
						t.Errorf("output %d: an emitted update carries an ACP status (P4): %s", i+1, o.Frame)
					}
					continue
				}
				kept = append(kept, o)
			}
			if emitted != tc.emitted {
				t.Errorf("%d launch-call updates emitted, want %d", emitted, tc.emitted)
			}
			if len(kept) != len(plain) {
				t.Fatalf("%d outputs besides emitted ones, %d without the module", len(kept), len(plain))
			}
			for i, o := range kept {
				p := plain[i]
				if o.To != p.To || !bytes.Equal(o.In.Frame, p.In.Frame) {
					t.Fatalf("output %d goes elsewhere with the module", i+1)
				}
				launch := isLaunchFrame(o.In.Frame)
				if bytes.Equal(o.Frame, p.Frame) {
					if launch && o.To == pipe.Client {
						t.Errorf("V2: a spawnAgent frame reached the client without the snapshot: %s", o.Frame)
					}
					continue
				}
				if !launch {
					t.Errorf("P1: a frame that is no launch-call frame changed:\n%s\n%s", p.Frame, o.Frame)
				}
				if !bytes.Equal(withoutAdditions(t, o.Frame), p.Frame) {
					t.Errorf("P1: a launch-call frame changed beyond _meta and the title:\n%s\n%s", p.Frame, o.Frame)
				}
				schema.CheckOutput(t, o.Op, o.In.Frame, o.Frame)
			}
			if got := proxytest.Snapshots(t, outs); !reflect.DeepEqual(got, tc.snapshots) {
				g, _ := json.MarshalIndent(got, "", "  ")
				w, _ := json.MarshalIndent(tc.snapshots, "", "  ")
				t.Errorf("last snapshots:\ngot  %s\nwant %s", g, w)
			}
			rewritetest.CheckFile(t, strings.TrimSuffix(path, ".jsonl")+".replay.jsonl", proxytest.Format(outs))
		})
	}
}

// isLaunchFrame reports whether a frame belongs to a spawnAgent call of
// the recordings (every one of their frames carries a senderThreadId and
// no other call's first frame is titled spawnAgent; ids are not reused).
func isLaunchFrame(frame []byte) bool {
	return bytes.Contains(frame, []byte(`"toolCallId":"call_fake_000003"`)) && bytes.Contains(frame, []byte(`"senderThreadId"`))
}

// TestOtherVendors: on every other vendor's capture the module changes
// nothing (V1), byte for byte.
func TestOtherVendors(t *testing.T) {
	proxytest.NothingOnOthers(t, capturesDir, codex.Module())
}

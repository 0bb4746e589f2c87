package gemini_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/proxy/proxytest"
	"github.com/acp-normalize/acp-normalize/rewrite/gemini"
	"github.com/acp-normalize/acp-normalize/rewrite/rewritetest"
)

// capturesDir holds every vendor's whole-session captures; the Gemini
// ones are real recordings (testdata/captures/gemini/README.md).
var capturesDir = filepath.Join("..", "..", "testdata", "captures")

// captureCases: the last snapshot of each launch call of each real
// recording, by "sessionId/toolCallId".
var captureCases = map[string]map[string]map[string]any{
	"codebase-investigator.jsonl": {
		"e72c77a6-0b72-4656-9c14-748b81f3a576/invoke_agent__invoke_agent_1796087334074_0": {
			"vendor": "gemini", "toolName": "invoke_agent", "subagentType": "codebase_investigator", "status": "completed"},
	},
	"cli-help.jsonl": {
		"f5442c02-d0c4-414b-a635-84a2a3243789/invoke_agent__invoke_agent_1796087348688_0": {
			"vendor": "gemini", "toolName": "invoke_agent", "subagentType": "cli_help", "status": "completed"},
	},
	"generalist.jsonl": { // denied by Gemini's policy: one failed update, no title
		"b2a9f429-51e9-459b-88c6-82e71251c0d3/invoke_agent__invoke_agent_1796087363571_0": {
			"vendor": "gemini", "toolName": "invoke_agent", "status": "failed"},
	},
	"subagents.jsonl": { // clientCapabilities.subagents is ignored by Gemini
		"41dfd8a0-ae32-4a41-963b-5cea6e048cc2/invoke_agent__invoke_agent_1796162129338_0": {
			"vendor": "gemini", "toolName": "invoke_agent", "subagentType": "codebase_investigator", "status": "completed"},
	},
}

// TestCaptures replays each real Gemini CLI recording through a Router
// with the gemini module and checks, besides the golden replay (the
// .replay.jsonl beside the capture, -update rewrites it):
//
//   - P1: a frame that is no launch-call frame leaves byte for byte, and a
//     launch-call frame differs only by its _meta["acp-normalize"];
//   - V2: every launch-call frame to the client carries the snapshot, and
//     each call's last snapshot is the expected one; nothing is added;
//   - P3: every frame the module changes matches the ACP schema.
func TestCaptures(t *testing.T) {
	files := proxytest.Captures(t, capturesDir, "gemini", false)
	if len(files) != len(captureCases) {
		t.Errorf("%d captures, %d cases: every capture needs a case", len(files), len(captureCases))
	}
	schema := rewritetest.LoadSchema(t)
	for _, path := range files {
		name := filepath.Base(path)
		t.Run(strings.TrimSuffix(name, ".jsonl"), func(t *testing.T) {
			want, ok := captureCases[name]
			if !ok {
				t.Fatalf("no case for %s", name)
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			recs := proxytest.ReadRecords(t, data)
			outs := proxytest.Route(t, recs, nil, gemini.Module())
			plain := proxytest.Route(t, recs, nil, proxytest.Inert(gemini.Module().Name))
			if len(outs) != len(plain) {
				t.Fatalf("%d outputs with the module, %d without: it must never add or drop frames", len(outs), len(plain))
			}
			for i, o := range outs {
				p := plain[i]
				launch := bytes.Contains(o.In.Frame, []byte(`"toolCallId":"invoke_agent__`))
				if bytes.Equal(o.Frame, p.Frame) {
					if launch && o.To == pipe.Client {
						t.Errorf("V2: a launch-call frame reached the client without the snapshot: %s", o.Frame)
					}
					continue
				}
				if !launch {
					t.Errorf("P1: a frame that is no launch-call frame changed:\n%s\n%s", p.Frame, o.Frame)
				}
				if !bytes.Equal(withoutSnapshot(t, o.Frame), p.Frame) {
					t.Errorf("P1: a launch-call frame changed beyond _meta:\n%s\n%s", p.Frame, o.Frame)
				}
				schema.CheckOutput(t, o.Op, o.In.Frame, o.Frame)
			}
			if got := proxytest.Snapshots(t, outs); !reflect.DeepEqual(got, want) {
				g, _ := json.MarshalIndent(got, "", "  ")
				w, _ := json.MarshalIndent(want, "", "  ")
				t.Errorf("last snapshots:\ngot  %s\nwant %s", g, w)
			}
			rewritetest.CheckFile(t, strings.TrimSuffix(path, ".jsonl")+".replay.jsonl", proxytest.Format(outs))
		})
	}
}

// TestOtherVendors: on every other vendor's capture the module changes
// nothing (V1), byte for byte.
func TestOtherVendors(t *testing.T) {
	proxytest.NothingOnOthers(t, capturesDir, gemini.Module())
}

package claude_test

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/acp-normalize/acp-normalize/proxy/proxytest"

	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite/rewritetest"
)

// TestGolden runs each testdata/golden/*.txtar case through a Router with
// the claude module. A case has:
//
//   - input.jsonl: {"from":"client"|"agent","frame":...} lines;
//   - output.jsonl: what each side receives, {"to":...,"op"?:...,"frame":...}
//     lines, compared byte for byte (go test -update rewrites it);
//   - snapshots.json (optional, hand-written, never rewritten): the last
//     _meta["acp-normalize"].subagent each launch call ("sessionId/toolCallId") must carry;
//   - parents.json (optional, hand-written): for each output line number
//     (1-based), the parentToolCallId it must carry.
//
// The case's name cites the rule it pins (TestGolden/L3_toolresponse_first).
func TestGolden(t *testing.T) {
	schema := rewritetest.LoadSchema(t)
	rewritetest.RunGolden(t, filepath.Join("testdata", "golden", "*.txtar"), func(t *testing.T, c *rewritetest.Case) {
		in, ok := c.File("input.jsonl")
		if !ok {
			t.Fatal("no input.jsonl section")
		}
		outs := proxytest.Route(t, proxytest.ReadRecords(t, in), nil, claudeModule())
		got := proxytest.Format(outs)
		for i, o := range outs {
			if !json.Valid(o.Frame) {
				t.Errorf("output %d is not JSON: %s", i+1, o.Frame)
			} else if o.To == pipe.Client && o.Op != "" {
				schema.CheckOutput(t, o.Op, o.In.Frame, o.Frame)
			}
		}
		if spec, ok := c.File("snapshots.json"); ok {
			var want map[string]map[string]any
			if err := json.Unmarshal(spec, &want); err != nil {
				t.Fatalf("snapshots.json: %v", err)
			}
			gotSnaps := proxytest.Snapshots(t, outs)
			if !reflect.DeepEqual(gotSnaps, want) {
				g, _ := json.MarshalIndent(gotSnaps, "", "  ")
				w, _ := json.MarshalIndent(want, "", "  ")
				t.Errorf("last snapshots differ:\ngot  %s\nwant %s", g, w)
			}
		}
		if spec, ok := c.File("parents.json"); ok {
			checkParents(t, outs, spec)
		}
		c.Check(t, "output.jsonl", got)
	})
}

// checkParents checks that exactly the listed output lines carry
// _meta["acp-normalize"].parentToolCallId, with the listed values (L4).
func checkParents(t *testing.T, outs []proxytest.Output, spec []byte) {
	t.Helper()
	var want map[string]string
	if err := json.Unmarshal(spec, &want); err != nil {
		t.Fatalf("parents.json: %v", err)
	}
	got := map[string]string{}
	for i, o := range outs {
		obj := proxytest.Described(o.Frame)
		var p string
		raw, ok := metaValue(obj, "parentToolCallId")
		if !ok {
			continue
		}
		if err := json.Unmarshal(raw, &p); err != nil {
			t.Errorf("output %d: parentToolCallId is not a string: %s", i+1, raw)
		}
		got[itoa(i+1)] = p
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("parentToolCallId by output line: got %v, want %v", got, want)
	}
}

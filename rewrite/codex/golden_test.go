package codex_test

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite/rewritetest"
)

// TestGolden runs each testdata/golden/*.txtar case through a Router with
// the codex module. A case has:
//
//   - a comment whose "options:" line lists settings (e.g. vendor=codex);
//   - input.jsonl: {"from":"client"|"agent","frame":...} lines;
//   - output.jsonl: what each side receives, {"to":...,"op"?:...,"frame":...}
//     lines, compared byte for byte (go test -update rewrites it);
//   - snapshots.json (optional, hand-written, never rewritten): the last
//     snapshot of each launch call, by "sessionId/toolCallId".
//
// Every frame the module writes to the client is checked against the ACP
// schema (P3). The case's name cites the rule it pins.
func TestGolden(t *testing.T) {
	schema := rewritetest.LoadSchema(t)
	rewritetest.RunGolden(t, filepath.Join("testdata", "golden", "*.txtar"), func(t *testing.T, c *rewritetest.Case) {
		in, ok := c.File("input.jsonl")
		if !ok {
			t.Fatal("no input.jsonl section")
		}
		outs := route(t, readRecords(t, in), module(t, caseOptions(c.Comment())...))
		for i, o := range outs {
			if !json.Valid(o.Frame) {
				t.Errorf("output %d is not JSON: %s", i+1, o.Frame)
			} else if o.To == pipe.Client && o.Op != "" {
				schema.CheckOutput(t, o.Op, o.in.Frame, o.Frame)
			}
		}
		if spec, ok := c.File("snapshots.json"); ok {
			var want map[string]map[string]any
			if err := json.Unmarshal(spec, &want); err != nil {
				t.Fatalf("snapshots.json: %v", err)
			}
			if got := snapshots(t, outs); !reflect.DeepEqual(got, want) {
				g, _ := json.MarshalIndent(got, "", "  ")
				w, _ := json.MarshalIndent(want, "", "  ")
				t.Errorf("last snapshots differ:\ngot  %s\nwant %s", g, w)
			}
		}
		c.Check(t, "output.jsonl", formatOutputs(outs))
	})
}

// caseOptions reads the settings of a case's "options:" comment line.
func caseOptions(comment []byte) []string {
	for _, line := range strings.Split(string(comment), "\n") {
		if rest, ok := strings.CutPrefix(line, "options:"); ok {
			return strings.Fields(rest)
		}
	}
	return nil
}

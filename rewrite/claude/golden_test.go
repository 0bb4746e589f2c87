package claude_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

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
	files, err := filepath.Glob(filepath.Join("testdata", "golden", "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no golden cases in testdata/golden")
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".txtar")
		t.Run(name, func(t *testing.T) {
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			sections := map[string]int{}
			for i, f := range ar.Files {
				sections[f.Name] = i
			}
			in, ok := sections["input.jsonl"]
			if !ok {
				t.Fatal("no input.jsonl section")
			}
			outs := route(t, readRecords(t, ar.Files[in].Data), nil, claudeModule())
			got := formatOutputs(outs)
			for i, line := range bytes.Split(bytes.TrimSuffix(got, []byte("\n")), []byte("\n")) {
				if !json.Valid(line) {
					t.Errorf("output line %d is not JSON: %s", i+1, line)
				}
			}

			if i, ok := sections["snapshots.json"]; ok {
				var want map[string]map[string]any
				if err := json.Unmarshal(ar.Files[i].Data, &want); err != nil {
					t.Fatalf("snapshots.json: %v", err)
				}
				gotSnaps := snapshots(t, outs)
				if !reflect.DeepEqual(gotSnaps, want) {
					g, _ := json.MarshalIndent(gotSnaps, "", "  ")
					w, _ := json.MarshalIndent(want, "", "  ")
					t.Errorf("last snapshots differ:\ngot  %s\nwant %s", g, w)
				}
			}
			if i, ok := sections["parents.json"]; ok {
				checkParents(t, outs, ar.Files[i].Data)
			}

			i, ok := sections["output.jsonl"]
			switch {
			case rewritetest.Updating():
				if ok {
					ar.Files[i].Data = got
				} else {
					ar.Files = append(ar.Files, txtar.File{Name: "output.jsonl", Data: got})
				}
				if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
			case !ok:
				t.Fatal("no output.jsonl section (run go test -update to create it)")
			case !bytes.Equal(got, ar.Files[i].Data):
				t.Errorf("output differs from output.jsonl (go test -update rewrites it after review):\n%s", lineDiff(ar.Files[i].Data, got))
			}
		})
	}
}

// checkParents checks that exactly the listed output lines carry
// _meta["acp-normalize"].parentToolCallId, with the listed values (L4).
func checkParents(t *testing.T, outs []output, spec []byte) {
	t.Helper()
	var want map[string]string
	if err := json.Unmarshal(spec, &want); err != nil {
		t.Fatalf("parents.json: %v", err)
	}
	got := map[string]string{}
	for i, o := range outs {
		obj := updateObject(o.Frame)
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

package proxytest

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/rewrite/rewritetest"
)

// Configured returns m configured with settings given as a capture
// records them ("name=value", or a bool option's name), against the
// shared options and m's own.
func Configured(t testing.TB, m rewrite.Module, settings ...string) rewrite.Module {
	t.Helper()
	s, unknown := rewrite.ParseRecorded(settings, rewrite.AllOptions([]rewrite.Module{m}))
	if len(unknown) > 0 {
		t.Fatalf("unknown settings %q", unknown)
	}
	return rewrite.Configure([]rewrite.Module{m}, s)[0]
}

// Golden runs every txtar case matching pattern through a Router with m.
// A case has:
//
//   - a comment whose "options:" line lists settings (e.g. vendor=codex);
//   - input.jsonl: {"from":"client"|"agent","frame":...} lines;
//   - output.jsonl: what each side receives, as Format writes it, compared
//     byte for byte (go test -update rewrites it);
//   - snapshots.json (optional, hand-written, never rewritten): the last
//     snapshot of each launch call, by "sessionId/toolCallId".
//
// Every frame the module writes to the client is checked against the ACP
// schema (P3), and every output must be JSON.
func Golden(t *testing.T, pattern string, m rewrite.Module) {
	schema := rewritetest.LoadSchema(t)
	rewritetest.RunGolden(t, pattern, func(t *testing.T, c *rewritetest.Case) {
		in, ok := c.File("input.jsonl")
		if !ok {
			t.Fatal("no input.jsonl section")
		}
		outs := Route(t, ReadRecords(t, in), Configured(t, m, caseOptions(c.Comment())...))
		for i, o := range outs {
			if !json.Valid(o.Frame) {
				t.Errorf("output %d is not JSON: %s", i+1, o.Frame)
			} else if o.To == pipe.Client && o.Op != "" {
				schema.CheckOutput(t, o.Op, o.In.Frame, o.Frame)
			}
		}
		if spec, ok := c.File("snapshots.json"); ok {
			CheckSnapshots(t, outs, spec)
		}
		c.Check(t, "output.jsonl", Format(outs))
	})
}

// CheckSnapshots compares the last snapshots of outs with the JSON object
// spec ("sessionId/toolCallId" -> snapshot).
func CheckSnapshots(t testing.TB, outs []Output, spec []byte) {
	t.Helper()
	var want map[string]map[string]any
	if err := json.Unmarshal(spec, &want); err != nil {
		t.Fatalf("expected snapshots: %v", err)
	}
	if got := Snapshots(t, outs); !reflect.DeepEqual(got, want) {
		g, _ := json.MarshalIndent(got, "", "  ")
		w, _ := json.MarshalIndent(want, "", "  ")
		t.Errorf("last snapshots differ:\ngot  %s\nwant %s", g, w)
	}
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

// Captures lists the whole-session captures of vendor under dir
// (dir/<vendor>/*.jsonl, the .replay.jsonl goldens left out); with
// others set, every other vendor's instead.
func Captures(t testing.TB, dir, vendor string, others bool) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*", "*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range files {
		if strings.HasSuffix(f, ".replay.jsonl") || (filepath.Base(filepath.Dir(f)) == vendor) == others {
			continue
		}
		out = append(out, f)
	}
	if len(out) == 0 {
		t.Fatalf("no captures under %s (vendor %s, others %v)", dir, vendor, others)
	}
	return out
}

// NothingOnOthers checks rule V1 on real data: on every capture under dir
// of a vendor other than m's, m's output equals, byte for byte, that of a
// module that does nothing.
func NothingOnOthers(t *testing.T, dir string, m rewrite.Module) {
	for _, path := range Captures(t, dir, m.Name, true) {
		t.Run(filepath.Base(filepath.Dir(path))+"/"+filepath.Base(path), func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			recs := ReadRecords(t, data)
			got, want := Format(Route(t, recs, m)), Format(Route(t, recs, Inert(m)))
			if !bytes.Equal(got, want) {
				t.Errorf("module %s changed %s:\n%s", m.Name, path, rewritetest.LineDiff(want, got))
			}
		})
	}
}

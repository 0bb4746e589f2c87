package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/acp-normalize/acp-normalize/rewrite/rewritetest"
)

// TestCheckCommand pins `acp-normalize check` (the real binary): stdout,
// stderr and the exit code, in testdata/check/NAME.golden (-update
// rewrites them).
func TestCheckCommand(t *testing.T) {
	captures := "../../testdata/captures/"
	tests := []struct {
		name string
		args []string
	}{
		// A real recording with non-standard methods (V7): exit 1.
		{"qwen-permission", []string{"check", captures + "qwen/permission.jsonl"}},
		{"qwen-permission-json", []string{"check", "--json", captures + "qwen/permission.jsonl"}},
		// Cursor's own methods (C1): what the proxy does with them.
		{"cursor-foreground", []string{"check", captures + "cursor/subagent-foreground.jsonl"}},
		// A clean session: exit 0.
		{"claude-clean", []string{"check", captures + "claude/rig-subagents.jsonl"}},
		// Two files, one report each; a trace is checked like a capture.
		{"two-files-and-a-trace", []string{"check", captures + "codex/subagents.jsonl", "testdata/inspector-trace.jsonl"}},
		// Bad capture lines are reported and the status is 1.
		{"bad-lines", []string{"check", "testdata/bad-lines.jsonl"}},
		// A file no line of which is a capture record (a replay's output):
		// nothing was checked, so it is not called clean.
		{"only-bad-lines", []string{"check", captures + "cursor/subagent-foreground.replay.jsonl"}},
		// A trace of a version this build cannot read: the file is not
		// checked at all.
		{"trace-version-2", []string{"check", "testdata/inspector-trace-v2.jsonl"}},
		{"usage-no-file", []string{"check"}},
		{"usage-missing-file", []string{"check", "testdata/no-such.jsonl"}},
		// A file with no frames (an empty one; stdin from a command that
		// failed: `zcat s.jsonl.gz | acp-normalize check -`) is not called
		// clean: nothing was checked, exit 1. It was "no problems", exit 0.
		{"no-frames", []string{"check", "testdata/empty.jsonl", "testdata/mock-session.jsonl"}},
		{"no-frames-json", []string{"check", "--json", "testdata/empty.jsonl"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runBinary(t, tt.args...)
			got := "exit " + strconv.Itoa(code) + "\n-- stdout --\n" + stdout + "-- stderr --\n" + stderr
			rewritetest.CheckFile(t, filepath.Join("testdata", "check", tt.name+".golden"), []byte(got))
		})
	}
}

// checkedFile is what `check --json` says about one file.
type checkedFile struct {
	File  string `json:"file"`
	Agent *struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"agent"`
	Findings []struct {
		Check, Side, To, Method, Update, Kind, Path, Message, Rule string
		Count, Reached                                             int
	} `json:"findings"`
}

// checkMarker starts the table of check findings in docs/compatibility.md.
const checkMarker = "<!-- check findings -->"

// TestCheckCompatibility keeps docs/compatibility.md and the bundled real
// recordings in step: `check` over every recording of a real agent (those
// whose initialize result names the agent and a version that is not
// hand-written) gives, per agent, exactly the problems the doc's table of
// check findings lists, with their frame and recording counts.
// -update rewrites the table.
func TestCheckCompatibility(t *testing.T) {
	t.Parallel()
	var real []string
	for _, f := range captureFiles(t, "*/*.jsonl") {
		if !strings.Contains(f, "/cursor/") { // Cursor's are hand-written
			real = append(real, f)
		}
	}
	_, stdout, stderr := runBinary(t, append([]string{"check", "--json"}, real...)...)
	var reports []checkedFile
	sc := bufio.NewScanner(strings.NewReader(stdout))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var r checkedFile
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("check --json line %q: %v (stderr %s)", sc.Text(), err, stderr)
		}
		reports = append(reports, r)
	}
	if len(reports) != len(real) {
		t.Fatalf("%d reports for %d files; stderr %s", len(reports), len(real), stderr)
	}
	table := checkTable(reports)
	doc, err := os.ReadFile(compatibilityDoc)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(doc, []byte(checkMarker))
	if i < 0 {
		t.Fatalf("%s: no %s marker", compatibilityDoc, checkMarker)
	}
	start := i + len(checkMarker) + 1
	end := start + bytes.Index(doc[start:], []byte("\n\n"))
	if end < start {
		end = len(doc)
	}
	if got := string(doc[start:end]) + "\n"; got != table {
		if rewritetest.Updating() {
			out := append(append(append([]byte{}, doc[:start]...), strings.TrimSuffix(table, "\n")...), doc[end:]...)
			if err := os.WriteFile(compatibilityDoc, out, 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		t.Errorf("%s: the check findings table is\n%s\nthe recordings give\n%s(go test ./cmd/acp-normalize -run TestCheckCompatibility -update rewrites it)", compatibilityDoc, got, table)
	}
}

// checkTable is the markdown table of check findings by agent.
func checkTable(reports []checkedFile) string {
	type row struct {
		agent, sender, frame, problem, rule string
		frames, reached                     int
		files                               map[string]bool
	}
	rows := map[string]*row{}
	recordings := map[string]int{}
	var agents []string
	for _, r := range reports {
		if r.Agent == nil || strings.Contains(r.Agent.Version, "handwritten") {
			continue
		}
		agent := "`" + r.Agent.Name + "` " + r.Agent.Version
		if recordings[agent] == 0 {
			agents = append(agents, agent)
		}
		recordings[agent]++
		for _, f := range r.Findings {
			frame := "`" + strings.TrimSpace(f.Method+" "+f.Update) + "` " + f.Kind
			if f.Method == "" {
				frame = f.Kind
			}
			problem := f.Message
			if f.Path != "" {
				problem = "`" + f.Path + "`: " + problem
			}
			key := agent + "\x00" + f.Side + "\x00" + frame + "\x00" + problem
			rw := rows[key]
			if rw == nil {
				rule := f.Check
				if f.Rule != "" {
					rule += ", rule " + f.Rule
				}
				rw = &row{agent: agent, sender: f.Side, frame: frame, problem: problem, rule: rule, files: map[string]bool{}}
				rows[key] = rw
			}
			rw.frames += f.Count
			rw.reached += f.Reached
			rw.files[r.File] = true
		}
	}
	sort.Strings(agents)
	var b strings.Builder
	b.WriteString("| agent | recordings | sent by | frame | problem | check | frames (recordings) | what the client gets |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|\n")
	for _, agent := range agents {
		var mine []*row
		for _, rw := range rows {
			if rw.agent == agent {
				mine = append(mine, rw)
			}
		}
		sort.Slice(mine, func(i, j int) bool {
			if mine[i].sender != mine[j].sender {
				return mine[i].sender < mine[j].sender
			}
			return mine[i].frame+mine[i].problem < mine[j].frame+mine[j].problem
		})
		if len(mine) == 0 {
			fmt.Fprintf(&b, "| %s | %d | | | none | | | |\n", agent, recordings[agent])
			continue
		}
		for _, rw := range mine {
			rule := rw.rule
			gets := "the problem"
			switch {
			case rw.sender == "acp-normalize":
				gets = "the problem, from acp-normalize"
			case rw.reached == 0:
				gets = "no problem: acp-normalize answers, drops or repairs them"
			case rw.reached < rw.frames:
				gets = fmt.Sprintf("the problem in %d of %d", rw.reached, rw.frames)
			}
			fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s | %d (%d) | %s |\n", agent, recordings[agent], rw.sender, rw.frame,
				strings.ReplaceAll(rw.problem, "|", `\|`), rule, rw.frames, len(rw.files), gets)
		}
	}
	return b.String()
}

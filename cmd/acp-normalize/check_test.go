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
		// A real recording with non-standard methods (V7), which the
		// proxy answers and drops: listed, exit 0.
		{"qwen-permission", []string{"check", captures + "qwen/permission.jsonl"}},
		{"qwen-permission-json", []string{"check", "--json", captures + "qwen/permission.jsonl"}},
		// Cursor's own methods (C1): what the proxy does with them. It
		// repairs every one: exit 0 by default (--fail-on broken), 1 with
		// --fail-on repaired.
		{"cursor-foreground", []string{"check", captures + "cursor/subagent-foreground.jsonl"}},
		{"cursor-foreground-fail-on-repaired", []string{"check", "--fail-on", "repaired", captures + "cursor/subagent-foreground.jsonl"}},
		// A problem the client gets (a tool call never announced): exit 1.
		{"gemini-generalist", []string{"check", captures + "gemini/generalist.jsonl"}},
		{"gemini-generalist-fail-on-none", []string{"check", "--fail-on", "none", captures + "gemini/generalist.jsonl"}},
		{"usage-fail-on", []string{"check", "--fail-on", "warn", captures + "gemini/generalist.jsonl"}},
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

// TestCheckFailOnEveryCapture: over every bundled capture, `check` exits
// 0 exactly when the proxy repairs every finding (none reached the
// receiver, none is in a frame acp-normalize wrote), with the findings
// still listed; `--fail-on repaired` fails on any finding and `--fail-on
// none` on none. Which findings reached the receiver is read from one
// `check --json` run, the exit statuses from runs of their own.
func TestCheckFailOnEveryCapture(t *testing.T) {
	t.Parallel()
	files := captureFiles(t, "*/*.jsonl")
	_, stdout, stderr := runBinary(t, append([]string{"check", "--json"}, files...)...)
	var repaired, broken, withFindings []string
	sc := bufio.NewScanner(strings.NewReader(stdout))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var r struct {
			File     string `json:"file"`
			Findings []struct {
				Side    string `json:"side"`
				Reached int    `json:"reached"`
				Level   string `json:"level"`
			} `json:"findings"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("check --json line %q: %v (stderr %s)", sc.Text(), err, stderr)
		}
		reaches := false
		for _, f := range r.Findings {
			want := "repaired"
			if f.Reached > 0 || f.Side == "acp-normalize" {
				want, reaches = "broken", true
			}
			if f.Level != want {
				t.Errorf("%s: a finding sent by %s that reached the receiver %d times has level %q, want %q", r.File, f.Side, f.Reached, f.Level, want)
			}
		}
		if len(r.Findings) > 0 {
			withFindings = append(withFindings, r.File)
		}
		if reaches {
			broken = append(broken, r.File)
		} else {
			repaired = append(repaired, r.File)
		}
	}
	if len(repaired)+len(broken) != len(files) {
		t.Fatalf("%d reports for %d files; stderr %s", len(repaired)+len(broken), len(files), stderr)
	}
	if len(withFindings) == len(broken) {
		t.Fatalf("no bundled capture has a finding the proxy repairs: the test checks nothing of --fail-on broken")
	}

	code, out, errOut := runBinary(t, append([]string{"check"}, repaired...)...)
	if code != 0 {
		t.Errorf("check over the %d captures the proxy fully repairs: exit %d, want 0; stderr %s", len(repaired), code, errOut)
	}
	if !strings.Contains(out, "acp-normalize repairs it") {
		t.Errorf("check over the captures the proxy fully repairs lists no repaired finding:\n%s", out)
	}
	for _, f := range broken {
		if code, _, errOut := runBinary(t, "check", f); code != 1 || !strings.Contains(errOut, "the receiver gets") {
			t.Errorf("check %s (a finding reaches the receiver): exit %d, stderr %q; want exit 1 and how many the receiver gets", f, code, errOut)
		}
	}
	for _, f := range withFindings {
		if code, _, _ := runBinary(t, "check", "--fail-on", "repaired", f); code != 1 {
			t.Errorf("check --fail-on repaired %s (it has findings): exit %d, want 1", f, code)
		}
	}
	if code, _, errOut := runBinary(t, append([]string{"check", "--fail-on", "none"}, files...)...); code != 0 {
		t.Errorf("check --fail-on none over every capture: exit %d, want 0; stderr %s", code, errOut)
	}
}

// TestCheckFailOnUsage: a --fail-on that is no level is the one line
// check prints, exit 2, whatever else is wrong with the command line (no
// file, a file that does not exist), and nothing is read: the level is
// known before any file is.
func TestCheckFailOnUsage(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		args []string
	}{
		{"with a capture", []string{"--fail-on", "warn", "../../testdata/captures/gemini/generalist.jsonl"}},
		{"with no file", []string{"--fail-on", "warn"}},
		{"with a file that does not exist", []string{"--fail-on", "warn", filepath.Join(t.TempDir(), "missing.jsonl")}},
		{"empty", []string{"--fail-on=", "../../testdata/captures/gemini/generalist.jsonl"}},
		{"in capitals", []string{"--fail-on", "BROKEN", "../../testdata/captures/gemini/generalist.jsonl"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			code, stdout, stderr := runBinary(t, append([]string{"check"}, tt.args...)...)
			if code != exitUsage || stdout != "" {
				t.Errorf("exit %d, stdout %q; want exit 2 and nothing on stdout", code, stdout)
			}
			if lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n"); len(lines) != 1 || !strings.HasPrefix(lines[0], "acp-normalize: --fail-on must be broken, repaired or none, not ") {
				t.Errorf("stderr %q: want the one --fail-on line", stderr)
			}
		})
	}
}

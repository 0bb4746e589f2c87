//go:build unix

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// Rule P3 against a real client: the official TypeScript ACP SDK
// (@agentclientprotocol/sdk 2.4.0, interop/ts) validates every frame it
// receives with the ACP schema. interop/ts/drive.mjs plays each capture
// through `acp-normalize -- acp-normalize mock-agent CAPTURE` with that SDK
// as the client and reports what it delivered, rejected and silently
// dropped; these tests assert that nothing the proxy writes is rejected or
// dropped, and that the normalized data (rule M snapshots, C8/C9 plans)
// arrives through the SDK's typed API.

// interopDir is the Node project of the SDK client.
var interopDir = filepath.Join("..", "..", "interop", "ts")

// tsSummary is drive.mjs's JSON summary.
type tsSummary struct {
	AgentMeta map[string]json.RawMessage `json:"agentMeta"`
	Updates   map[string]int             `json:"updates"`
	// Sessions counts the session updates by sessionId; Children are the
	// child sessions subagent_update announced (Subagent Sessions).
	Sessions map[string]int `json:"sessions"`
	Children map[string]struct {
		Parent string   `json:"parent"`
		Title  string   `json:"title"`
		States []string `json:"states"`
	} `json:"children"`
	Subagents map[string][]struct {
		SessionUpdate string                     `json:"sessionUpdate"`
		Subagent      map[string]json.RawMessage `json:"subagent"`
	} `json:"subagents"`
	Plans []struct {
		Entries []struct {
			Content  string `json:"content"`
			Priority string `json:"priority"`
			Status   string `json:"status"`
		} `json:"entries"`
	} `json:"plans"`
	Permissions      []json.RawMessage `json:"permissions"`
	Elicitations     []json.RawMessage `json:"elicitations"`
	ExtensionMethods []struct {
		Kind   string `json:"kind"`
		Method string `json:"method"`
	} `json:"extensionMethods"`
	StopReasons []string          `json:"stopReasons"`
	Dropped     []tsDrop          `json:"dropped"`
	Errors      []json.RawMessage `json:"errors"`
}

// tsDrop is a value the SDK's parse silently lost (an unknown field, an
// out-of-enum value, a skipped array item).
type tsDrop struct {
	Method        string          `json:"method"` // "session/update", "initialize result", ...
	SessionUpdate string          `json:"sessionUpdate"`
	ToolCallID    string          `json:"toolCallId"`
	Path          string          `json:"path"`
	Raw           json.RawMessage `json:"raw"`
	ParsedLength  *int            `json:"parsedLength"`
}

func (d tsDrop) key() string {
	return fmt.Sprintf("%s|%s|%q|%s|%s", d.Method, d.SessionUpdate, d.ToolCallID, d.Path, d.Raw)
}

// needNodeSDK skips the test when Node or the installed SDK is missing, and
// returns the absolute path of drive.mjs.
func needNodeSDK(t *testing.T) string {
	t.Helper()
	return filepath.Join(needNodeModule(t, interopDir, "@agentclientprotocol/sdk"), "drive.mjs")
}

// needNodeModule skips the test unless node is installed and the interop
// folder dir has the npm package pkg installed (npm ci from its lock
// file); it returns dir's absolute path.
func needNodeModule(t *testing.T, dir, pkg string) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skipf("node is not installed; the test needs Node 20+ and %s", pkg)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(abs, "node_modules", filepath.FromSlash(pkg), "package.json")); err != nil {
		rel := filepath.ToSlash(filepath.Join("interop", filepath.Base(dir)))
		t.Skipf("%s is not installed in %s; install it with: npm ci --prefix %s", pkg, rel, rel)
	}
	return abs
}

// runDrive runs drive.mjs with flags against acp-normalize (with
// proxyFlags) in front of the mock agent serving capture, and returns the
// summary and the script's exit code.
func runDrive(t *testing.T, script, capture string, flags, proxyFlags []string) (tsSummary, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args := append(append([]string{script}, flags...), "--capture", capture, "--", proxyBinary)
	args = append(append(args, proxyFlags...), "--", proxyBinary, "mock-agent", "--no-stderr", capture)
	cmd := exec.CommandContext(ctx, "node", args...)
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("node %s: %v\nstderr:\n%s", strings.Join(args, " "), err, stderr.String())
	}
	if ctx.Err() != nil {
		t.Fatalf("drive.mjs did not finish within the limit (a hung turn)\nstderr:\n%s", stderr.String())
	}
	var s tsSummary
	if err := json.Unmarshal(stdout.Bytes(), &s); err != nil {
		t.Fatalf("drive.mjs exit %d printed no summary: %v\nstdout:\n%s\nstderr:\n%s", code, err, stdout.String(), stderr.String())
	}
	return s, code
}

// captureFacts is what a capture says the session should look like.
type captureFacts struct {
	declaresSubagents bool
	stopReasons       []string // recorded session/prompt results, in order
	subagentCalls     int      // cursor/task requests (C1)
	planFrames        int      // cursor/update_todos and cursor/create_plan requests (C8, C9)
	askQuestion       bool     // a cursor/ask_question request (C10)
}

var planMethod = regexp.MustCompile(`^_?cursor/(update_todos|create_plan)$`)

// readCaptureFacts reads a capture's input records.
func readCaptureFacts(t *testing.T, path string) captureFacts {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var facts captureFacts
	promptIDs := map[string]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var rec struct {
			From  string `json:"from"`
			Frame *struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
				Params struct {
					ClientCapabilities map[string]json.RawMessage `json:"clientCapabilities"`
				} `json:"params"`
				Result struct {
					StopReason string `json:"stopReason"`
				} `json:"result"`
			} `json:"frame"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		fr := rec.Frame
		if fr == nil {
			continue
		}
		switch {
		case rec.From == "client" && fr.Method == "initialize":
			_, facts.declaresSubagents = fr.Params.ClientCapabilities["subagents"]
		case rec.From == "client" && fr.Method == "session/prompt":
			promptIDs[string(fr.ID)] = true
		case rec.From == "agent" && fr.Method == "" && promptIDs[string(fr.ID)]:
			facts.stopReasons = append(facts.stopReasons, fr.Result.StopReason)
			delete(promptIDs, string(fr.ID))
		case rec.From == "agent" && (fr.Method == "cursor/task" || fr.Method == "_cursor/task"):
			facts.subagentCalls++
		case rec.From == "agent" && planMethod.MatchString(fr.Method):
			facts.planFrames++
		case rec.From == "agent" && strings.HasSuffix(fr.Method, "cursor/ask_question"):
			facts.askQuestion = true
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return facts
}

// interopRun is one way of driving a capture.
type interopRun struct {
	name  string
	flags []string // drive.mjs flags
}

// interopRuns lists the runs for a capture: as its client declared, then
// with the other subagents setting, and with form elicitation when the
// capture asks a question.
func interopRuns(facts captureFacts) []interopRun {
	if facts.declaresSubagents {
		// native.jsonl: the recorded agent sends standard subagent_update
		// and session_message frames, which ACP allows only toward a client
		// that declared clientCapabilities.subagents. Driving it as a client
		// that did not would test the recording, not the proxy (the SDK
		// rejects those frames with -32602 with --modules none as well), so
		// it runs only as recorded.
		return []interopRun{{name: "as-recorded+subagents", flags: []string{"--subagents"}}}
	}
	runs := []interopRun{
		{name: "as-recorded"},
		// S1 for Cursor; for Claude flat captures the proxy must keep the
		// flat shapes valid for a subagent-aware client too.
		{name: "subagents", flags: []string{"--subagents"}},
	}
	if facts.askQuestion {
		runs = append(runs, interopRun{name: "elicitation-form", flags: []string{"--elicitation-form"}})
	}
	return runs
}

// checkDropped fails on every value the SDK dropped from the normalized
// stream that it did not also drop from the same session without the
// modules (baseline): what the vendor itself sends is passed through byte
// for byte (P1) and is not the proxy's to repair (the real Claude adapter
// 0.101.0 sends unstable fields such as agentCapabilities.providers and a
// prompt result's usage, which the stable 2.4.0 schema strips). The one
// proxy-made drop accepted is the tool call content block
// {"type":"session","sessionId":CHILD} of rule S1, which the Subagent
// Sessions spec added after the 2.4.0 schema copy, so 2.4.0's unstable
// schema skips it as an unknown content item.
func checkDropped(s, baseline tsSummary, subagents bool) error {
	vendor := map[string]int{}
	for _, d := range baseline.Dropped {
		vendor[d.key()]++
	}
	var errs []error
	for _, d := range s.Dropped {
		if vendor[d.key()] > 0 {
			vendor[d.key()]--
			continue
		}
		if subagents && d.Path == "update.content" && d.ParsedLength != nil &&
			(d.SessionUpdate == "tool_call" || d.SessionUpdate == "tool_call_update") {
			var items []struct {
				Type string `json:"type"`
			}
			if json.Unmarshal(d.Raw, &items) == nil {
				session := 0
				for _, it := range items {
					if it.Type == "session" {
						session++
					}
				}
				if session > 0 && len(items)-session == *d.ParsedLength {
					continue
				}
			}
		}
		errs = append(errs, fmt.Errorf("P3: the SDK silently dropped %s of a %s %s (toolCallId %q) that the vendor did not send: %s", d.Path, d.Method, d.SessionUpdate, d.ToolCallID, d.Raw))
	}
	return errors.Join(errs...)
}

// hasSnapshot reports whether a tool_call_update carried a rule-M snapshot
// of vendor with one of statuses.
func hasSnapshot(s tsSummary, vendor string, statuses ...string) bool {
	for _, snaps := range s.Subagents {
		for _, sn := range snaps {
			var v, st string
			_ = json.Unmarshal(sn.Subagent["vendor"], &v)
			_ = json.Unmarshal(sn.Subagent["status"], &st)
			if sn.SessionUpdate == "tool_call_update" && v == vendor && slices.Contains(statuses, st) {
				return true
			}
		}
	}
	return false
}

func TestInteropTSCaptures(t *testing.T) {
	script := needNodeSDK(t)
	captures := captureFiles(t, "*/*.jsonl")
	if len(captures) == 0 {
		t.Fatalf("no captures under %s", capturesRoot)
	}
	for _, capture := range captures {
		abs, err := filepath.Abs(capture)
		if err != nil {
			t.Fatal(err)
		}
		vendor := filepath.Base(filepath.Dir(capture))
		name := strings.TrimSuffix(filepath.Base(capture), ".jsonl")
		facts := readCaptureFacts(t, abs)
		if len(facts.stopReasons) == 0 {
			t.Fatalf("%s: no recorded session/prompt result", capture)
		}
		for _, run := range interopRuns(facts) {
			t.Run(vendor+"/"+name+"/"+run.name, func(t *testing.T) {
				t.Parallel()
				s, code := runDrive(t, script, abs, run.flags, nil)
				// The same session without the modules: what the vendor's
				// own frames make the SDK drop (its errors are expected,
				// e.g. cursor/task reaching the client).
				baseline, _ := runDrive(t, script, abs, run.flags, []string{"--modules", "none"})
				subagents := slices.Contains(run.flags, "--subagents")
				if len(s.Errors) > 0 {
					var b strings.Builder
					for _, e := range s.Errors {
						b.WriteString("\n  ")
						b.Write(e)
					}
					t.Errorf("P3: the TypeScript ACP SDK reported errors on the proxy's output:%s", b.String())
				}
				if code != 0 {
					t.Errorf("drive.mjs exit %d, want 0", code)
				}
				if err := checkDropped(s, baseline, subagents); err != nil {
					t.Error(err)
				}
				if !slices.Equal(s.StopReasons, facts.stopReasons) {
					t.Errorf("stop reasons %q, want the recorded %q", s.StopReasons, facts.stopReasons)
				}
				if _, ok := s.AgentMeta["acp-normalize"]; !ok {
					t.Errorf("M: initialize result's agentCapabilities._meta has no acp-normalize advertisement: %v", s.AgentMeta)
				}
				for _, m := range s.ExtensionMethods {
					if strings.HasPrefix(m.Method, "_cursor/") {
						t.Errorf("C1/C8/C13: vendor %s %s reached the client", m.Kind, m.Method)
					}
				}
				switch {
				case vendor == "cursor" && facts.subagentCalls > 0:
					if !hasSnapshot(s, "cursor", "completed", "launched") {
						t.Errorf("M/C3: no tool_call_update with a cursor subagent snapshot (completed or launched) arrived: %v", s.Subagents)
					}
					if subagents && s.Updates["subagent_update"] == 0 {
						t.Errorf("S1: a client that declared subagents got no subagent_update: %v", s.Updates)
					}
				case vendor == "claude" && strings.HasPrefix(name, "flat-"):
					if !hasSnapshot(s, "claude", "completed", "launched") {
						t.Errorf("M/L3: no tool_call_update with a claude subagent snapshot (completed or launched) arrived: %v", s.Subagents)
					}
				case vendor == "qwen" || vendor == "opencode":
					if !hasSnapshot(s, vendor, "completed", "launched", "failed") {
						t.Errorf("M/V2: no tool_call_update with a %s subagent snapshot (completed, launched or failed) arrived: %v", vendor, s.Subagents)
					}
				}
				checkChildSessions(t, s, subagents)
				if got := s.Updates["plan"]; got != facts.planFrames || len(s.Plans) != facts.planFrames {
					t.Errorf("C8/C9: %d plan updates arrived, want one per recorded update_todos/create_plan (%d)", got, facts.planFrames)
				}
				for i, p := range s.Plans {
					if len(p.Entries) == 0 {
						t.Errorf("C8: plan update %d has no entries", i)
					}
					for _, e := range p.Entries {
						if e.Priority != "medium" || e.Content == "" {
							t.Errorf("C8: plan update %d entry %+v", i, e)
						}
					}
				}
				if slices.Contains(run.flags, "--elicitation-form") && len(s.Elicitations) == 0 {
					t.Errorf("C10: a client that declared elicitation.form got no elicitation/create")
				}
				if t.Failed() {
					out, _ := json.MarshalIndent(s, "", "  ")
					t.Logf("summary:\n%s", out)
				}
			})
		}
	}
}

// checkChildSessions checks what the SDK client got of Subagent Sessions:
// with the opt-in, a child session per subagent launch call (S1, S2, S4),
// each announced on a session the client has, and the frames linked to a
// launch call arriving on a child (S5: the child's updates reach the
// client's handler); without it, none (P3).
func checkChildSessions(t *testing.T, s tsSummary, subagents bool) {
	t.Helper()
	if !subagents {
		if len(s.Children) > 0 || s.Updates["session_message"] > 0 {
			t.Errorf("P3: a client that did not opt in got child sessions %v", s.Children)
		}
		return
	}
	if len(s.Subagents) > 0 && len(s.Children) == 0 {
		t.Errorf("S4: %d launch calls, no child session announced", len(s.Subagents))
	}
	onChildren := 0
	for id, c := range s.Children {
		if s.Sessions[c.Parent] == 0 {
			t.Errorf("S4: child %s announced on %s, a session the client never had updates on", id, c.Parent)
		}
		if len(c.States) == 0 || c.States[0] != "running" {
			t.Errorf("S4: child %s does not start running: %v", id, c.States)
		}
		onChildren += s.Sessions[id]
	}
	for _, p := range s.Permissions {
		var perm struct {
			SessionID string `json:"sessionId"`
		}
		_ = json.Unmarshal(p, &perm)
		if _, ok := s.Children[perm.SessionID]; ok {
			onChildren++ // S5: a child's permission request on the child
		}
	}
	t.Logf("%d child sessions, %d frames on them", len(s.Children), onChildren)
}

// TestInteropTSDetectsViolations is the control: without the modules the
// Cursor capture's vendor request reaches the SDK, and the harness must
// report it. A harness that reported nothing here would prove nothing above.
func TestInteropTSDetectsViolations(t *testing.T) {
	script := needNodeSDK(t)
	capture, err := filepath.Abs(filepath.Join(capturesRoot, "cursor", "subagent-foreground.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	s, code := runDrive(t, script, capture, nil, []string{"--modules", "none"})
	if code == 0 || len(s.Errors) == 0 {
		t.Fatalf("cursor/task passed through to the SDK client unreported (exit %d, errors %s)", code, s.Errors)
	}
	all, _ := json.Marshal(s.Errors)
	if !bytes.Contains(all, []byte("cursor/task")) {
		t.Errorf("errors do not name cursor/task: %s", s.Errors)
	}
}

// TestInteropTSCheckDropped pins what checkDropped lets through, without Node.
func TestInteropTSCheckDropped(t *testing.T) {
	n := func(i int) *int { return &i }
	sessionBlock := tsDrop{Method: "session/update", SessionUpdate: "tool_call", ToolCallID: "T", Path: "update.content",
		Raw: json.RawMessage(`[{"type":"content","content":{"type":"text","text":"p"}},{"type":"session","sessionId":"C"}]`), ParsedLength: n(1)}
	badKind := tsDrop{Method: "session/update", SessionUpdate: "tool_call_update", ToolCallID: "T", Path: "update.kind", Raw: json.RawMessage(`"task"`)}
	vendorField := tsDrop{Method: "initialize result", Path: "agentCapabilities.providers", Raw: json.RawMessage(`{}`)}
	lostText := sessionBlock
	lostText.ParsedLength = n(0)
	tests := []struct {
		name      string
		got, base []tsDrop
		subagents bool
		wantErr   bool
	}{
		{name: "nothing dropped", wantErr: false},
		{name: "vendor drop also in baseline", got: []tsDrop{vendorField}, base: []tsDrop{vendorField}},
		{name: "vendor drop twice, baseline once", got: []tsDrop{vendorField, vendorField}, base: []tsDrop{vendorField}, wantErr: true},
		{name: "S1 session content block for a subagents client", got: []tsDrop{sessionBlock}, subagents: true},
		{name: "session content block without the capability", got: []tsDrop{sessionBlock}, wantErr: true},
		{name: "a non-session content item lost too", got: []tsDrop{lostText}, subagents: true, wantErr: true},
		{name: "out-of-enum kind the proxy wrote", got: []tsDrop{badKind}, subagents: true, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkDropped(tsSummary{Dropped: tt.got}, tsSummary{Dropped: tt.base}, tt.subagents)
			if (err != nil) != tt.wantErr {
				t.Errorf("checkDropped = %v, want error %v", err, tt.wantErr)
			}
		})
	}
}

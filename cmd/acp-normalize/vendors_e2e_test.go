package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
	"github.com/acp-normalize/acp-normalize/pipe"
)

// The cross-vendor promise of rule M: a client reads one
// _meta["acp-normalize"].subagent shape, whichever vendor launched the
// subagent. These tests run a Claude capture and the Cursor captures
// through the module list of this binary and compare the fields.

// capturesRoot is the repository's capture directory.
var capturesRoot = filepath.Join("..", "..", "testdata", "captures")

// sharedSubagentFields are the rule-M fields both vendors set on a
// finished foreground subagent, with the JSON type each must have.
var sharedSubagentFields = map[string]string{
	"vendor":       "string",
	"toolName":     "string",
	"description":  "string",
	"prompt":       "string",
	"subagentType": "string",
	"agentId":      "string",
	"background":   "boolean",
	"status":       "string",
	"durationMs":   "number",
}

// optionalSubagentFields may be missing, but have this type when set.
var optionalSubagentFields = map[string]string{
	"model":         "string",
	"resultText":    "string",
	"totalTokens":   "number",
	"toolUseCount":  "number",
	"outputFile":    "string",
	"resolvedModel": "string",
	"effort":        "string",
	"name":          "string",
	"raw":           "object",
}

// subagentStatuses is the status enum of rule M.
var subagentStatuses = []string{"pending", "running", "launched", "completed", "failed", "cancelled"}

// replayed is one frame a side would receive.
type replayed struct {
	To    string          `json:"to"`
	Frame json.RawMessage `json:"frame"`
}

// replayCapture runs a capture's input records through the real binary's
// modules: `acp-normalize replay CAPTURE` (rule R3), as a process.
func replayCapture(t *testing.T, path string) []replayed {
	t.Helper()
	cmd := exec.Command(proxyBinary, "replay", path)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("acp-normalize replay %s: %v: %s", path, err, stderr.String())
	}
	var outs []replayed
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var r replayed
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("replay output line is not JSON: %v: %s", err, sc.Bytes())
		}
		if r.Frame != nil {
			outs = append(outs, r)
		}
	}
	return outs
}

// lastSubagents returns the last _meta["acp-normalize"].subagent the
// client received for each tool call, by toolCallId.
func lastSubagents(t *testing.T, outs []replayed) map[string]map[string]json.RawMessage {
	t.Helper()
	last := map[string]map[string]json.RawMessage{}
	for _, o := range outs {
		if o.To != "client" {
			continue
		}
		var obj []byte
		switch env := pipe.Peek(o.Frame); {
		case env.MethodIs("session/update"):
			obj, _ = rawjson.Lookup(o.Frame, "params", "update")
		case env.MethodIs("session/request_permission"):
			obj, _ = rawjson.Lookup(o.Frame, "params", "toolCall")
		default:
			continue
		}
		snap, ok := rawjson.Lookup(obj, "_meta", "acp-normalize", "subagent")
		if !ok {
			continue
		}
		id, _ := rawjson.LookupString(obj, "toolCallId")
		var m map[string]json.RawMessage
		if err := json.Unmarshal(snap, &m); err != nil {
			t.Fatalf("subagent snapshot is not an object: %v: %s", err, snap)
		}
		last[id] = m
	}
	return last
}

// jsonType names the JSON type of a raw value.
func jsonType(v json.RawMessage) string {
	switch rawjson.FirstByte(v) {
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	case '{':
		return "object"
	case '[':
		return "array"
	}
	return "number"
}

// checkSubagentShape checks one snapshot against rule M: the shared fields
// all present with their types, optional ones typed, the status in the
// enum, the vendor as expected, and no field outside rule M.
func checkSubagentShape(snap map[string]json.RawMessage, vendor string) error {
	var errs []error
	typed := func(field string, v json.RawMessage, typ string) {
		if got := jsonType(v); got != typ {
			errs = append(errs, fmt.Errorf("%s is a %s, want a %s", field, got, typ))
		}
	}
	for field, typ := range sharedSubagentFields {
		if v, ok := snap[field]; ok {
			typed(field, v, typ)
		} else {
			errs = append(errs, fmt.Errorf("%s missing", field))
		}
	}
	for field, v := range snap {
		if _, shared := sharedSubagentFields[field]; !shared {
			if typ, ok := optionalSubagentFields[field]; ok {
				typed(field, v, typ)
			} else {
				errs = append(errs, fmt.Errorf("%s is no rule-M field", field))
			}
		}
	}
	var s string
	if json.Unmarshal(snap["status"], &s) == nil && !slices.Contains(subagentStatuses, s) {
		errs = append(errs, fmt.Errorf("status %q is not in %v", s, subagentStatuses))
	}
	if json.Unmarshal(snap["vendor"], &s) == nil && s != vendor {
		errs = append(errs, fmt.Errorf("vendor %q, want %q", s, vendor))
	}
	return errors.Join(errs...)
}

// sameSubagentFields reports the differences between two vendors'
// snapshots: every field either sets must have the same JSON type in both,
// and both must set every shared field.
func sameSubagentFields(a, b map[string]json.RawMessage) error {
	var errs []error
	for field := range sharedSubagentFields {
		_, inA := a[field]
		_, inB := b[field]
		if !inA || !inB {
			errs = append(errs, fmt.Errorf("%s: set by one vendor only (%v, %v)", field, inA, inB))
		}
	}
	for field, va := range a {
		if vb, ok := b[field]; ok && jsonType(va) != jsonType(vb) {
			errs = append(errs, fmt.Errorf("%s: %s vs %s", field, jsonType(va), jsonType(vb)))
		}
	}
	return errors.Join(errs...)
}

// claudeSubagent is the Claude half: the real flat-mode capture of adapter
// 0.101.0, whose one Agent call must carry a complete rule-M snapshot.
func claudeSubagent(t *testing.T) map[string]json.RawMessage {
	t.Helper()
	path := filepath.Join(capturesRoot, "claude", "flat-foreground.jsonl")
	snaps := lastSubagents(t, replayCapture(t, path))
	snap, ok := snaps["toolu_01Fake000004"]
	if len(snaps) != 1 || !ok {
		t.Fatalf("%s: want one subagent snapshot for toolu_01Fake000004, got %d: %v", path, len(snaps), snaps)
	}
	if err := checkSubagentShape(snap, "claude"); err != nil {
		t.Fatalf("claude snapshot breaks rule M: %v", err)
	}
	return snap
}

// contractExample is the Cursor snapshot printed in rule M of the
// contract (normalized-output.md), agentId shortened there and here.
const contractExample = `{"vendor":"cursor","toolName":"task","description":"count files","prompt":"Count the .go files under ./proxy","subagentType":"unspecified","model":"gpt-5.4-mini-medium","agentId":"5b886cff-...","background":false,"status":"completed","durationMs":7627,"raw":{"subagentType":{"custom":{"unspecified":{}}}}}`

func TestVendorsSubagentFields(t *testing.T) {
	t.Run("claude_capture", func(t *testing.T) {
		claudeSubagent(t)
	})

	t.Run("claude_matches_contract_example", func(t *testing.T) {
		var example map[string]json.RawMessage
		if err := json.Unmarshal([]byte(contractExample), &example); err != nil {
			t.Fatal(err)
		}
		if err := checkSubagentShape(example, "cursor"); err != nil {
			t.Fatalf("the contract's own example fails the check: %v", err)
		}
		if err := sameSubagentFields(claudeSubagent(t), example); err != nil {
			t.Errorf("claude vs the contract's cursor example: %v", err)
		}
	})
	// Every vendor's captures: TestVendorCaptures.
}

// TestSubagentFieldChecks shows that the comparison can fail: each broken
// snapshot is rejected.
func TestSubagentFieldChecks(t *testing.T) {
	var good map[string]json.RawMessage
	if err := json.Unmarshal([]byte(contractExample), &good); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		change func(map[string]json.RawMessage)
	}{
		{"missing_agentId", func(m map[string]json.RawMessage) { delete(m, "agentId") }},
		{"durationMs_as_string", func(m map[string]json.RawMessage) { m["durationMs"] = json.RawMessage(`"7627"`) }},
		{"background_as_string", func(m map[string]json.RawMessage) { m["background"] = json.RawMessage(`"false"`) }},
		{"status_out_of_enum", func(m map[string]json.RawMessage) { m["status"] = json.RawMessage(`"done"`) }},
		{"unknown_field", func(m map[string]json.RawMessage) { m["agentType"] = json.RawMessage(`"x"`) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			bad := maps.Clone(good)
			tc.change(bad)
			if checkSubagentShape(bad, "cursor") == nil && sameSubagentFields(good, bad) == nil {
				t.Errorf("a broken snapshot passed both checks")
			}
		})
	}
}

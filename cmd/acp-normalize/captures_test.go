package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/rewrite/methods"
	"github.com/acp-normalize/acp-normalize/rewrite/rewritetest"
	"github.com/acp-normalize/acp-normalize/rewrite/sessions"
	"github.com/acp-normalize/acp-normalize/route"
	"github.com/acp-normalize/acp-normalize/route/routetest"
)

// compatibilityDoc is the table of agents and snapshot fields that
// TestVendorCaptures keeps true.
var compatibilityDoc = filepath.Join("..", "..", "docs", "compatibility.md")

// TestVendorCaptures is the cross-vendor test: every bundled capture of
// every vendor (testdata/captures/<vendor>/*.jsonl, <vendor> being the
// module's name) is replayed through the binary's whole module list and
// (the byte-exact goldens are each vendor's: <capture>.replay.jsonl, the
// replay through the vendor's module, pinned by its package's tests;
// Cursor's, through the whole list, by TestCursorCaptures)
//
//   - P1: a frame no rule claims leaves with its own bytes; every frame
//     written is valid JSON;
//   - P3, V7, C1, C13: no method reaches the client that is neither an
//     ACP schema method nor '_'-prefixed, nor any vendor method a module
//     declares (_cursor/*); every agent request kept from the client is
//     answered exactly once;
//   - M, V2: every subagent snapshot has vendor (the capture's vendor),
//     toolName and a status of rule M's enum, and only rule-M fields, each
//     of its JSON type;
//   - V1: each vendor module replayed alone on another vendor's capture
//     changes nothing;
//   - docs/compatibility.md: the fields each vendor's captures fill are
//     exactly the ticks of its column in the snapshot table (P4: none it
//     does not hold), and every agentInfo version the captures name is in
//     the agents table.
func TestVendorCaptures(t *testing.T) {
	doc, err := os.ReadFile(compatibilityDoc)
	if err != nil {
		t.Fatal(err)
	}
	ticks := docTable(t, doc, "<!-- snapshot fields -->")
	agents := docTable(t, doc, "<!-- agents -->")
	filled := map[string]map[string]bool{}
	captures := captureFiles(t, "*/*.jsonl")
	if len(captures) == 0 {
		t.Fatal("no captures")
	}
	for _, path := range captures {
		vendor := filepath.Base(filepath.Dir(path))
		name := vendor + "/" + strings.TrimSuffix(filepath.Base(path), ".jsonl")
		if filled[vendor] == nil {
			filled[vendor] = map[string]bool{}
		}
		t.Run(name, func(t *testing.T) {
			recs := captureRecords(t, path)
			replayChecked(t, recs, filled[vendor], vendor)
			othersDoNothing(t, recs, vendor)
			checkAgentVersion(t, recs, vendor, agents)
		})
	}
	t.Run("compatibility_table", func(t *testing.T) {
		for vendor, fields := range filled {
			column, ok := ticks[vendor]
			if !ok {
				t.Errorf("%s: captures of vendor %s, but no %s column in the snapshot-field table", compatibilityDoc, vendor, vendor)
				continue
			}
			var want []string
			for field, cell := range column {
				if cell == "✓" {
					want = append(want, field)
				}
			}
			sort.Strings(want)
			got := slices.Sorted(func(yield func(string) bool) {
				for f := range fields {
					if !yield(f) {
						return
					}
				}
			})
			if !slices.Equal(got, want) {
				t.Errorf("%s: the %s captures fill %v, the table ticks %v", compatibilityDoc, vendor, got, want)
			}
		}
		for vendor := range ticks {
			if filled[vendor] == nil {
				t.Errorf("%s: column %s has no captures under testdata/captures/%s", compatibilityDoc, vendor, vendor)
			}
		}
	})
}

// captureRecords reads a capture's input records.
func captureRecords(t *testing.T, path string) []pipe.Record {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return routetest.ReadRecords(t, data)
}

// vendorMethodPatterns are the methods the modules declare as vendor
// methods ("cursor/*"): none may reach the client.
func vendorMethodPatterns() []string {
	var out []string
	for _, m := range allModules() {
		out = append(out, m.VendorMethods...)
	}
	return out
}

func matchesPattern(method string, patterns []string) bool {
	for _, p := range patterns {
		if prefix, ok := strings.CutSuffix(p, "*"); ok && strings.HasPrefix(method, prefix) || method == p {
			return true
		}
	}
	return false
}

// replayChecked routes recs through the whole module list, checks the
// invariants of TestVendorCaptures, adds the snapshot fields it sees to
// filled.
func replayChecked(t *testing.T, recs []pipe.Record, filled map[string]bool, vendor string) {
	t.Helper()
	r, err := route.NewRouter(route.RouterConfig{Modules: allModules(), Version: version})
	if err != nil {
		t.Fatal(err)
	}
	filter := rewrite.NewMethodFilter()
	patterns := vendorMethodPatterns()
	kept := map[string]int{} // agent requests kept from the client -> proxy answers
	for _, rec := range recs {
		if rec.Frame == nil {
			continue
		}
		in := pipe.Peek(rec.Frame)
		outs := r.Handle(rec.From, rec.Frame, nil)
		reached := false
		for _, o := range outs {
			if o.Op == "" && !bytes.Equal(o.Frame, rec.Frame) {
				t.Errorf("P1: forwarded frame changed: %s", o.Frame)
			}
			if !json.Valid(o.Frame) {
				t.Errorf("invalid JSON written: %s", o.Frame)
				continue
			}
			env := pipe.Peek(o.Frame)
			m := string(env.Method)
			if o.To == pipe.Client && m != "" && (filter.Unknown(m) || matchesPattern(m, patterns)) {
				t.Errorf("P3/V7: method %s reached the client", m)
			}
			if rec.From == pipe.Agent && in.Kind == pipe.Request && o.To == pipe.Client && env.Kind == pipe.Request && bytes.Equal(env.ID, in.ID) {
				reached = true
			}
			if n, ok := kept[string(env.ID)]; ok && o.To == pipe.Agent && o.Op != "" && env.Kind == pipe.Response {
				kept[string(env.ID)] = n + 1
			}
			if o.To == pipe.Client {
				checkSnapshotFrame(t, o.Frame, vendor, filled)
			}
		}
		if rec.From == pipe.Agent && in.Kind == pipe.Request && !reached {
			// Answered now or later (C4 holds a cursor/task): counted to the end.
			kept[string(in.ID)] = 0
			for _, o := range outs {
				if env := pipe.Peek(o.Frame); o.To == pipe.Agent && env.Kind == pipe.Response && bytes.Equal(env.ID, in.ID) {
					kept[string(in.ID)]++
				}
			}
		}
	}
	for id, n := range kept {
		if n != 1 {
			t.Errorf("agent request %s kept from the client was answered %d times by the proxy, want once", id, n)
		}
	}
}

// subagentFieldTypes are rule M's snapshot fields and their JSON types.
var subagentFieldTypes = map[string]string{
	"vendor": "string", "toolName": "string", "description": "string", "prompt": "string",
	"subagentType": "string", "model": "string", "agentId": "string", "background": "boolean",
	"status": "string", "durationMs": "number", "resultText": "string", "totalTokens": "number",
	"toolUseCount": "number", "outputFile": "string", "resolvedModel": "string", "effort": "string",
	"name": "string", "childSessionId": "string", "raw": "object",
}

// checkSnapshotFrame checks the snapshot a client-bound frame carries,
// if any (M, V2), and records its fields.
func checkSnapshotFrame(t *testing.T, frame []byte, vendor string, filled map[string]bool) {
	t.Helper()
	snapRaw, ok := rawjson.Lookup(routetest.Described(frame), "_meta", "acp-normalize", "subagent")
	if !ok {
		return
	}
	var snap map[string]json.RawMessage
	if err := json.Unmarshal(snapRaw, &snap); err != nil {
		t.Errorf("M: snapshot is not an object: %s", snapRaw)
		return
	}
	for _, required := range []string{"vendor", "toolName", "status"} {
		if _, ok := snap[required]; !ok {
			t.Errorf("M/V2: snapshot without %s: %s", required, snapRaw)
		}
	}
	var s string
	if json.Unmarshal(snap["vendor"], &s) == nil && s != vendor {
		t.Errorf("M: vendor %q in a %s capture", s, vendor)
	}
	if json.Unmarshal(snap["status"], &s) == nil && !slices.Contains(subagentStatuses, s) {
		t.Errorf("M: status %q is not in %v", s, subagentStatuses)
	}
	for field, v := range snap {
		typ, ok := subagentFieldTypes[field]
		switch {
		case !ok:
			t.Errorf("M: %s is no rule-M field: %s", field, snapRaw)
		case jsonType(v) != typ:
			t.Errorf("M: %s is a %s, want a %s", field, jsonType(v), typ)
		}
		filled[field] = true
	}
}

// othersDoNothing replays recs through each vendor module other than the
// capture's own, alone, and through an inert module of the same name: the
// outputs must be the same (V1: a module acts only on its agent).
func othersDoNothing(t *testing.T, recs []pipe.Record, vendor string) {
	t.Helper()
	for _, m := range allModules() {
		if m.Name == vendor || m.Name == methods.Name || m.Name == sessions.Name {
			// methods (V7) and sessions (S0-S8) are for every agent
			continue
		}
		got := routetest.Format(routetest.Route(t, recs, nil, m))
		want := routetest.Format(routetest.Route(t, recs, nil, routetest.Inert(m.Name)))
		if !bytes.Equal(got, want) {
			t.Errorf("V1: module %s changed a %s capture:\n%s", m.Name, vendor, rewritetest.LineDiff(want, got))
		}
	}
}

// checkAgentVersion checks that the agents table has a row for vendor
// that names the agentInfo the capture's initialize result carries.
func checkAgentVersion(t *testing.T, recs []pipe.Record, vendor string, agents map[string]map[string]string) {
	t.Helper()
	row, ok := agents[vendor]
	if !ok {
		t.Errorf("%s: no row for module %s in the agents table", compatibilityDoc, vendor)
		return
	}
	for _, rec := range recs {
		info, ok := rawjson.Lookup(rec.Frame, "result", "agentInfo")
		if rec.From != pipe.Agent || !ok {
			continue
		}
		name, _ := rawjson.LookupString(info, "name")
		ver, _ := rawjson.LookupString(info, "version")
		if row["agentInfo.name"] != name {
			t.Errorf("%s: agents table says agentInfo.name %q for %s, the capture %q", compatibilityDoc, row["agentInfo.name"], vendor, name)
		}
		if !slices.Contains(strings.Split(row["versions recorded"], ", "), ver) && !strings.HasSuffix(ver, "-handwritten") {
			t.Errorf("%s: version %s of %s is not in the agents table (%q)", compatibilityDoc, ver, vendor, row["versions recorded"])
		}
	}
}

// docTable reads the markdown table after marker in doc. Its first
// column names the rows, its header the columns; it returns
// column -> row -> cell for a table whose rows are fields (the first
// header cell "field"), else row -> column -> cell. Backquotes are
// removed.
func docTable(t *testing.T, doc []byte, marker string) map[string]map[string]string {
	t.Helper()
	i := bytes.Index(doc, []byte(marker))
	if i < 0 {
		t.Fatalf("%s: no %s marker", compatibilityDoc, marker)
	}
	sc := bufio.NewScanner(bytes.NewReader(doc[i+len(marker):]))
	var header []string
	out := map[string]map[string]string{}
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" && header == nil {
			continue
		}
		if !strings.HasPrefix(line, "|") {
			break
		}
		var cells []string
		for _, c := range strings.Split(strings.Trim(line, "|"), "|") {
			cells = append(cells, strings.ReplaceAll(strings.TrimSpace(c), "`", ""))
		}
		switch {
		case header == nil:
			header = cells
			continue
		case strings.HasPrefix(cells[0], "---"):
			continue
		}
		for j := 1; j < len(cells) && j < len(header); j++ {
			row, col := cells[0], header[j]
			if header[0] == "field" {
				row, col = col, row
			}
			if out[row] == nil {
				out[row] = map[string]string{}
			}
			out[row][col] = cells[j]
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s: empty table after %s", compatibilityDoc, marker)
	}
	return out
}

// TestSessionPaths keeps the "paths in the captures" row of the child
// sessions table of docs/compatibility.md true: every capture of each
// vendor, replayed through the whole module list as an opted-in client
// (S0; a recording of a client that did not opt in gets the opt-in
// added), and each child session the client is told of classified:
// native (the agent's own subagent_update, forwarded), translated (from
// a draft subagent_spawned, S6) or synthesized (the proxy's, S4).
func TestSessionPaths(t *testing.T) {
	doc, err := os.ReadFile(compatibilityDoc)
	if err != nil {
		t.Fatal(err)
	}
	table := docTable(t, doc, "<!-- child sessions -->")
	seen := map[string]map[string]bool{}
	for _, path := range captureFiles(t, "*/*.jsonl") {
		vendor := filepath.Base(filepath.Dir(path))
		if seen[vendor] == nil {
			seen[vendor] = map[string]bool{}
		}
		recs := captureRecords(t, path)
		for i, rec := range recs {
			if rec.From == pipe.Client && string(pipe.Peek(rec.Frame).Method) == "initialize" {
				if v, ok := rawjson.Lookup(rec.Frame, "params", "clientCapabilities", "subagents"); !ok || rawjson.FirstByte(v) != '{' {
					f, err := rawjson.Set(rec.Frame, []byte("{}"), "params", "clientCapabilities", "subagents")
					if err != nil {
						t.Fatal(err)
					}
					recs[i].Frame = f
				}
			}
		}
		for _, o := range routetest.RouteConfig(t, recs, route.RouterConfig{Modules: allModules()}) {
			if tag, _ := rawjson.LookupString(o.Frame, "params", "update", "sessionUpdate"); o.To != pipe.Client || tag != "subagent_update" {
				continue
			}
			child, _ := rawjson.LookupString(o.Frame, "params", "update", "sessionId")
			inTag, _ := rawjson.LookupString(o.In.Frame, "params", "update", "sessionUpdate")
			switch {
			case strings.HasPrefix(child, "acp-normalize-subagent-"):
				seen[vendor]["synthesized"] = true
			case inTag == "subagent_spawned" || inTag == "subagent_state_update":
				seen[vendor]["translated"] = true
			case o.Op == "":
				seen[vendor]["native"] = true
			default:
				t.Errorf("%s: a subagent_update of unknown origin: %s", path, o.Frame)
			}
		}
	}
	for vendor, paths := range seen {
		want := table[vendor]["paths in the captures"]
		got := strings.Join(slices.Sorted(maps.Keys(paths)), ", ")
		if got == "" {
			got = "none"
		}
		if !slices.Equal(strings.Split(want, ", "), slices.Sorted(slices.Values(strings.Split(want, ", ")))) {
			t.Errorf("%s: %s's paths %q are not in alphabetical order", compatibilityDoc, vendor, want)
		}
		if got != want {
			t.Errorf("%s: the %s captures take the paths %q, the table says %q", compatibilityDoc, vendor, got, want)
		}
	}
}

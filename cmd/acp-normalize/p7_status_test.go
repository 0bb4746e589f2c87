package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/route"
)

var updateClientView = flag.Bool("update-client-view", false, "rewrite docs/client-view.md from the bundled captures")

// clientProfile is a client the status checks play: the capture's own
// client, or the same one opted in to subagents (S0), or with a trait or
// a method left to it (P7).
type clientProfile struct {
	name     string
	optIn    bool
	settings rewrite.Settings
}

var clientProfiles = []clientProfile{
	{name: "as recorded"},
	{name: "opted in (S0)", optIn: true},
	{name: "finished-as-new", settings: rewrite.Settings{rewrite.ClientTraitsOption: string(rewrite.TraitFinishedAsNew)}},
	{name: "reprints-finished", settings: rewrite.Settings{rewrite.ClientTraitsOption: string(rewrite.TraitReprintsFinished)}},
	{name: "handles cursor/task", settings: rewrite.Settings{rewrite.ClientHandlesOption: "cursor/task"}},
}

// clientFrame is one frame the client gets, with how it came to be.
type clientFrame struct {
	frame []byte
	op    string // "" forwarded as the vendor sent it, else pipe.Op*
}

// replayFor runs a capture through every module for a client profile
// and returns what the client receives, in order.
func replayFor(t *testing.T, path string, p clientProfile) []clientFrame {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if p.optIn {
		// The client's initialize with clientCapabilities.subagents (S0).
		data = bytes.Replace(data, []byte(`"clientCapabilities":{`), []byte(`"clientCapabilities":{"subagents":{},`), 1)
	}
	var out []clientFrame
	configure := func(start *route.Step) (route.RouterConfig, error) {
		s := rewrite.Settings{}
		if start != nil {
			s, _ = rewrite.ParseRecorded(start.Options, moduleOptions())
		}
		for k, v := range p.settings {
			s[k] = v
		}
		return route.RouterConfig{Modules: allModules(), Version: version, Settings: s}, nil
	}
	err = route.ReplayWith(bytes.NewReader(data), configure, func(st *route.Step) error {
		for _, o := range st.Outs {
			if o.To == pipe.Client {
				out = append(out, clientFrame{frame: bytes.Clone(o.Frame), op: o.Op})
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return out
}

// toolUpdate is what a client that reads only standard fields takes from
// a session/update of a tool call.
type toolUpdate struct {
	session, id, tag string
	status           string // "" when absent
	title            string
	hasTitle         bool
	content          string // the content blocks' types, "" when absent
	snapshot         bool   // carries _meta["acp-normalize"].subagent
}

func readToolUpdate(f []byte) (toolUpdate, bool) {
	env := pipe.Peek(f)
	if !env.MethodIs("session/update") {
		return toolUpdate{}, false
	}
	upd, _ := rawjson.Lookup(f, "params", "update")
	var u toolUpdate
	u.tag, _ = rawjson.LookupString(upd, "sessionUpdate")
	if u.tag != "tool_call" && u.tag != "tool_call_update" {
		return u, false
	}
	u.session, _ = rawjson.LookupString(f, "params", "sessionId")
	u.id, _ = rawjson.LookupString(upd, "toolCallId")
	u.status, _ = rawjson.LookupString(upd, "status")
	u.title, u.hasTitle = rawjson.LookupString(upd, "title")
	if c, ok := rawjson.Lookup(upd, "content"); ok && string(c) != "null" {
		var kinds []string
		_ = rawjson.Elements(c, func(b []byte) bool {
			k, _ := rawjson.LookupString(b, "type")
			if k == "content" {
				k, _ = rawjson.LookupString(b, "content", "type")
			}
			kinds = append(kinds, k)
			return true
		})
		u.content = "[" + strings.Join(kinds, ",") + "]"
	}
	_, u.snapshot = rawjson.Lookup(upd, "_meta", "acp-normalize", "subagent")
	return u, true
}

// readPermissionToolCall reads the toolCall of a session/request_permission
// as readToolUpdate reads an update: the client shows it as the call (its
// status included: C9, C10 and P7 give the call's last vendor status).
func readPermissionToolCall(f []byte) (toolUpdate, bool) {
	if env := pipe.Peek(f); !env.MethodIs("session/request_permission") {
		return toolUpdate{}, false
	}
	var u toolUpdate
	u.tag = "request_permission"
	u.session, _ = rawjson.LookupString(f, "params", "sessionId")
	u.id, _ = rawjson.LookupString(f, "params", "toolCall", "toolCallId")
	u.status, _ = rawjson.LookupString(f, "params", "toolCall", "status")
	u.title, u.hasTitle = rawjson.LookupString(f, "params", "toolCall", "title")
	if c, ok := rawjson.Lookup(f, "params", "toolCall", "content"); ok && string(c) != "null" {
		u.content = "[...]"
	}
	return u, true
}

// statusRank orders the tool call statuses as a call goes through them.
func statusRank(status string) int {
	switch status {
	case "pending":
		return 1
	case "in_progress":
		return 2
	case "completed", "failed":
		return 3
	}
	return 0
}

// lenientStatus is the status a client shows that reads a status-less
// update with a title or content as in_progress (Kandev's adapter):
// the update's status, else in_progress for such an update, else "".
func (u toolUpdate) lenientStatus() string {
	if u.status != "" {
		return u.status
	}
	if u.hasTitle || u.content != "" {
		return "in_progress"
	}
	return ""
}

// TestP7NoStatusGoesBack is rule P7 (and P4) over every bundled capture
// of every vendor, for every client profile: a client reading only
// standard fields never sees a tool call's status go back from a
// terminal state (completed, failed), whether it takes an absent status
// as unchanged (ACP) or, like Kandev's adapter, a status-less update with
// title or content as in_progress; the vendor's own frames aside (they
// reach the client the same without the proxy), a new tool_call under
// the same id being a new call (C6). A client with the finished-as-new
// trait gets no update the proxy emits for a finished call, one with
// reprints-finished none with a title or content.
func TestP7NoStatusGoesBack(t *testing.T) {
	n := 0
	for _, path := range captureFiles(t, "*/*.jsonl") {
		for _, p := range clientProfiles {
			n++
			t.Run(filepath.Base(filepath.Dir(path))+"/"+filepath.Base(path)+"/"+p.name, func(t *testing.T) {
				checkStatuses(t, replayFor(t, path, p), p)
			})
		}
	}
	if n == 0 {
		t.Fatal("no captures")
	}
}

func checkStatuses(t *testing.T, frames []clientFrame, p clientProfile) {
	type key struct{ session, id string }
	last := map[key]string{}    // the status a strict client shows
	lenient := map[key]string{} // the status a lenient client shows
	for i, cf := range frames {
		u, ok := readToolUpdate(cf.frame)
		if !ok {
			u, ok = readPermissionToolCall(cf.frame)
		}
		if !ok || u.id == "" {
			continue
		}
		k := key{u.session, u.id}
		if u.tag == "tool_call" && cf.op != pipe.OpEmit {
			delete(last, k) // a new call under a reused id (C6)
			delete(lenient, k)
		}
		finished := rewrite.Finished(last[k])
		if u.status != "" {
			switch {
			case finished && !rewrite.Finished(u.status):
				t.Errorf("P4/P7: frame %d (%s): status %s after %s: %s", i, opName(cf.op), u.status, last[k], cf.frame)
			case cf.op != "" && statusRank(u.status) < statusRank(last[k]):
				// P4: a frame the proxy writes never downgrades what the
				// vendor said (pending after in_progress).
				t.Errorf("P4: frame %d (%s): status %s after %s: %s", i, opName(cf.op), u.status, last[k], cf.frame)
			}
			if cf.op == "" || statusRank(u.status) >= statusRank(last[k]) {
				last[k] = u.status
			}
		}
		if ls := u.lenientStatus(); ls != "" {
			if rewrite.Finished(lenient[k]) && !rewrite.Finished(ls) && cf.op != "" {
				t.Errorf("P7: frame %d (%s) reads as %s after %s to a client that takes a status-less update with title or content as running: %s",
					i, opName(cf.op), ls, lenient[k], cf.frame)
			}
			lenient[k] = ls
		}
		if cf.op == pipe.OpEmit && finished {
			switch t2 := p.settings[rewrite.ClientTraitsOption]; {
			case t2 == string(rewrite.TraitFinishedAsNew):
				t.Errorf("P7: frame %d emitted for a finished call to a finished-as-new client: %s", i, cf.frame)
			case t2 == string(rewrite.TraitReprintsFinished) && (u.hasTitle || u.content != ""):
				t.Errorf("P7: frame %d emitted with title or content for a finished call to a reprints-finished client: %s", i, cf.frame)
			}
		}
	}
}

func opName(op string) string {
	if op == "" {
		return "vendor"
	}
	return "proxy " + op
}

// viewCaptures are the foreground and background subagent captures of
// each vendor that docs/client-view.md shows.
var viewCaptures = []struct{ vendor, kind, file string }{
	{"cursor", "foreground", "cursor/subagent-foreground.jsonl"},
	{"cursor", "background", "cursor/background-and-question.jsonl"},
	{"cursor", "foreground, older build (placeholder title, stripped rawInput)", "cursor/legacy-underscore.jsonl"},
	{"claude", "foreground", "claude/flat-foreground.jsonl"},
	{"claude", "background", "claude/flat-background.jsonl"},
	{"codex", "foreground", "codex/foreground.jsonl"},
	{"codex", "background", "codex/background.jsonl"},
	{"qwen", "foreground", "qwen/foreground.jsonl"},
	{"qwen", "background", "qwen/background.jsonl"},
	{"opencode", "foreground", "opencode/foreground.jsonl"},
	{"opencode", "background", "opencode/background.jsonl"},
	{"gemini", "foreground (Gemini CLI has no background subagents)", "gemini/codebase-investigator.jsonl"},
}

// TestP7ClientView derives docs/client-view.md from the bundled captures:
// for a foreground and a background subagent of each vendor, what a
// client that reads only standard fields sees of the launch call, in
// order, with and without the subagents opt-in (rules C3, C8-C10, L6,
// L7, V3, V5, S*, P7). `go test ./cmd/acp-normalize -run TestP7ClientView
// -update-client-view` rewrites it; the test fails when the doc and the
// modules disagree, so the doc cannot drift.
func TestP7ClientView(t *testing.T) {
	var b strings.Builder
	b.WriteString(clientViewHeader)
	for _, vc := range viewCaptures {
		path := filepath.Join("..", "..", "testdata", "captures", filepath.FromSlash(vc.file))
		fmt.Fprintf(&b, "\n## %s: %s (`testdata/captures/%s`)\n", vc.vendor, vc.kind, vc.file)
		for _, p := range clientProfiles[:2] {
			fmt.Fprintf(&b, "\n%s:\n\n```\n", map[bool]string{false: "A client that declares nothing", true: "A client that opted in to subagents (S0)"}[p.optIn])
			writeView(&b, replayFor(t, path, p))
			b.WriteString("```\n")
		}
	}
	doc := filepath.Join("..", "..", "docs", "client-view.md")
	if *updateClientView {
		if err := os.WriteFile(doc, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	if string(want) != b.String() {
		t.Errorf("docs/client-view.md differs from what the captures give (go test ./cmd/acp-normalize -run TestP7ClientView -update-client-view rewrites it)")
	}
}

const clientViewHeader = `# What a client that reads only standard fields sees

Generated by ` + "`go test ./cmd/acp-normalize -run TestP7ClientView -update-client-view`" + ` from the
bundled captures; the test fails when this page and the modules disagree.

For each vendor's foreground and background subagent, every frame the client gets about the
subagent's launch call (a tool call that carries the ` + "`_meta[\"acp-normalize\"]`" + ` snapshot) and
about its child session (` + "`subagent_update`, `session_message`" + `, opted-in clients only), in
order. Columns: the frame (` + "`vendor`" + ` as the vendor sent it, ` + "`changed`" + ` in the place of a vendor
frame, with what the proxy added, ` + "`added`" + ` a frame the proxy added after it), the update, the standard ` + "`status`" + ` (` + "`-`" + `
when absent: unchanged for an ACP client), ` + "`title`" + `, the content block types, and what a
client shows that reads a status-less update with title or content as ` + "`in_progress`" + ` (Kandev's
adapter): that column never goes back from ` + "`completed`" + ` on a proxy frame (rule P7,
` + "`TestP7NoStatusGoesBack`" + ` checks every capture). Child-session frames show the child's state.
Tool call ids are cut to 12 characters.
`

// writeView writes the launch calls' frames (and child-session frames)
// of one replay, one line each.
func writeView(b *strings.Builder, frames []clientFrame) {
	launch := map[string]bool{}
	for _, cf := range frames {
		if u, ok := readToolUpdate(cf.frame); ok && u.snapshot {
			launch[u.id] = true
		}
	}
	shown := map[string]string{}
	lines := 0
	fmt.Fprintf(b, "%-8s %-17s %-12s %-12s %-40s %-18s %s\n", "frame", "update", "toolCallId", "status", "title", "content", "lenient client")
	for _, cf := range frames {
		who := "vendor"
		switch cf.op {
		case pipe.OpReplace:
			who = "changed"
		case pipe.OpEmit, pipe.OpRequest, pipe.OpReply:
			who = "added"
		}
		if u, ok := readToolUpdate(cf.frame); ok && launch[u.id] {
			if ls := u.lenientStatus(); ls != "" {
				shown[u.id] = ls
			}
			title := "-"
			if u.hasTitle {
				title = fmt.Sprintf("%q", cut(u.title, 36))
			}
			status, content := u.status, u.content
			if status == "" {
				status = "-"
			}
			if content == "" {
				content = "-"
			}
			lenient := shown[u.id]
			if lenient == "" {
				lenient = "-"
			}
			fmt.Fprintf(b, "%-8s %-17s %-12s %-12s %-40s %-18s %s\n", who, u.tag, short(u.id), status, title, content, lenient)
			lines++
			continue
		}
		upd, _ := rawjson.Lookup(cf.frame, "params", "update")
		switch tag, _ := rawjson.LookupString(upd, "sessionUpdate"); tag {
		case "subagent_update":
			st, _ := rawjson.LookupString(upd, "state", "state")
			if st == "" {
				st = "-"
			}
			title, ok := rawjson.LookupString(upd, "title")
			t := "-"
			if ok {
				t = fmt.Sprintf("%q", title)
			}
			fmt.Fprintf(b, "%-8s %-17s %-12s %-12s %s\n", who, tag, "child", st, t)
			lines++
		case "session_message":
			fmt.Fprintf(b, "%-8s %-17s %s\n", who, tag, "child")
			lines++
		}
	}
	if lines == 0 {
		b.WriteString("(no launch call reaches the client)\n")
	}
}

func short(id string) string {
	id = strings.ReplaceAll(id, "\n", `\n`)
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

// cut shortens s to n runes, marking the cut with "...".
func cut(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-3]) + "..."
}

// codeCompanionEntries plays CodeCompanion.nvim's tool call handling
// (interactions/chat/acp/handler.lua, process_tool_call, commit f1afd025:
// it merges an update into the call it caches, forgets the call and its
// line when the call completes, holds back a pending call, and prints a
// new line for a call it has no line for) over the frames a client gets,
// and returns how many lines each tool call got, by toolCallId.
func codeCompanionEntries(frames []clientFrame) map[string]int {
	status := map[string]string{} // the cached call's merged status
	cached := map[string]bool{}
	line := map[string]bool{}
	entries := map[string]int{}
	for _, cf := range frames {
		u, ok := readToolUpdate(cf.frame)
		if !ok || u.id == "" {
			continue
		}
		st := u.status
		if st == "" && cached[u.id] {
			st = status[u.id]
		}
		if st == "completed" {
			delete(cached, u.id)
			delete(status, u.id)
		} else {
			cached[u.id], status[u.id] = true, st
		}
		if st == "pending" {
			continue
		}
		if line[u.id] {
			if st == "completed" {
				delete(line, u.id)
			}
			continue
		}
		entries[u.id]++
		line[u.id] = true
		if st == "completed" {
			// Added as a finished line: the next update finds no line.
			delete(line, u.id)
		}
	}
	return entries
}

// TestP7CodeCompanionShowsEachCallOnce: through the proxy, a client named
// CodeCompanion.nvim (the known-clients table gives it finished-as-new)
// prints each subagent launch call of every bundled capture as often as
// it would without the proxy, and each Cursor subagent call once (rule
// P7; before it, the late cursor/task update printed a second "Other:
// Task" line). CodeCompanion itself needs Neovim 0.11, which this machine
// cannot install, so its logic is played here (codeCompanionEntries).
func TestP7CodeCompanionShowsEachCallOnce(t *testing.T) {
	for _, path := range captureFiles(t, "*/*.jsonl") {
		t.Run(filepath.Base(filepath.Dir(path))+"/"+filepath.Base(path), func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			named := filepath.Join(t.TempDir(), "capture.jsonl")
			if err := os.WriteFile(named, renameClient(t, data, "CodeCompanion.nvim"), 0o600); err != nil {
				t.Fatal(err)
			}
			through := replayFor(t, named, clientProfile{name: "CodeCompanion.nvim"})
			if !bytes.Contains(through[0].frame, []byte(`"clientTraits":["finished-as-new"]`)) {
				// (the first frame the client gets answers its initialize)
				t.Fatalf("P7: CodeCompanion.nvim not known: %s", through[0].frame)
			}
			alone := codeCompanionEntries(agentFramesOf(t, data))
			launch := map[string]bool{}
			for _, cf := range through {
				if u, ok := readToolUpdate(cf.frame); ok && u.snapshot {
					launch[u.id] = true
				}
			}
			got := codeCompanionEntries(through)
			for id := range launch {
				want := max(alone[id], 1)
				if strings.HasPrefix(path, filepath.Join("..", "..", "testdata", "captures", "cursor")) {
					want = 1
				}
				if got[id] != want {
					t.Errorf("P7: launch call %q printed %d times through the proxy, want %d (alone: %d)", id, got[id], want, alone[id])
				}
			}
		})
	}
}

// agentFramesOf returns the agent frames of a capture as a client gets
// them without the proxy.
func agentFramesOf(t *testing.T, capture []byte) []clientFrame {
	t.Helper()
	var out []clientFrame
	err := route.Replay(bytes.NewReader(capture), route.RouterConfig{}, func(st *route.Step) error {
		if st.Kind == route.StepFrame && st.From == pipe.Agent && st.In != nil {
			out = append(out, clientFrame{frame: bytes.Clone(st.In)})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// renameClient returns the capture with its client's initialize naming
// the client name in clientInfo.
func renameClient(t *testing.T, capture []byte, name string) []byte {
	t.Helper()
	lines := bytes.Split(capture, []byte("\n"))
	for i, l := range lines {
		frame, ok := rawjson.Lookup(l, "frame")
		env := pipe.Peek(frame)
		if from, _ := rawjson.LookupString(l, "from"); !ok || from != "client" || !env.MethodIs("initialize") {
			continue
		}
		info := rawjson.AppendString([]byte(`{"name":`), name)
		out, err := rawjson.Set(l, append(info, `,"version":"1.0.0"}`...), "frame", "params", "clientInfo")
		if err != nil {
			t.Fatal(err)
		}
		lines[i] = out
		break
	}
	return bytes.Join(lines, []byte("\n"))
}

package sessions_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite/rewritetest"
	"github.com/acp-normalize/acp-normalize/route"
	"github.com/acp-normalize/acp-normalize/route/routetest"
)

// capturesRoot holds every vendor's captures (real recordings, and the
// hand-written ones its README names).
var capturesRoot = filepath.Join("..", "..", "testdata", "captures")

// TestCaptures replays every capture of every vendor through the whole
// module list, as its client declared and, when that client did not opt
// in, again as a client that declared clientCapabilities.subagents would
// (the agent's recorded frames are the same: Qwen, OpenCode and Gemini
// ignore the capability; Claude and Codex flat recordings stand for
// their builds without native sessions). Each opted-in replay must give
// the client, for every subagent launch call, exactly one standard child
// session (S1, S2, S4), announced before the call's first frame when the
// proxy makes it, ending in the state the call's snapshot ends in; the
// frames linked to the call on the child (S5); and only frames the ACP
// schema accepts (P3, unstable shapes for the session updates). A replay
// for a client that did not opt in must carry no session shape (P3,
// S0). The opted-in replays are pinned byte for byte in
// testdata/captures/<vendor>-<capture>.sessions.jsonl (frames forwarded
// unchanged appear as their input's seq; go test -update rewrites them).
func TestCaptures(t *testing.T) {
	schema := rewritetest.LoadSchema(t)
	files, err := filepath.Glob(filepath.Join(capturesRoot, "*", "*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var n int
	for _, path := range files {
		if strings.HasSuffix(path, ".replay.jsonl") {
			continue
		}
		vendor := filepath.Base(filepath.Dir(path))
		name := strings.TrimSuffix(filepath.Base(path), ".jsonl")
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		recs := routetest.ReadRecords(t, data)
		for i := range recs {
			if recs[i].Seq == 0 {
				recs[i].Seq = int64(i + 1) // hand-written captures: their line
			}
		}
		n++
		declared := optedIn(recs)
		t.Run(vendor+"/"+name, func(t *testing.T) {
			outs := routeRecords(t, recs)
			if !declared {
				checkNoSessionShapes(t, outs)
				return
			}
			checkSessions(t, schema, outs)
			rewritetest.CheckFile(t, filepath.Join("testdata", "captures", vendor+"-"+name+".sessions.jsonl"), compact(outs))
		})
		if declared {
			continue
		}
		t.Run(vendor+"/"+name+"/opted-in", func(t *testing.T) {
			outs := routeRecords(t, withOptIn(t, recs))
			checkSessions(t, schema, outs)
			rewritetest.CheckFile(t, filepath.Join("testdata", "captures", vendor+"-"+name+".opted-in.sessions.jsonl"), compact(outs))
		})
	}
	if n == 0 {
		t.Fatal("no captures")
	}
}

func routeRecords(t *testing.T, recs []pipe.Record) []routetest.Output {
	t.Helper()
	logs := rewritetest.NewLogRecorder()
	outs := routetest.RouteConfig(t, recs, route.RouterConfig{Modules: modules(), Logger: logs.Logger()})
	for _, rec := range logs.Records() {
		if rec.Level >= 8 { // error
			t.Errorf("a module logged an error: %s", rec.Message)
		}
	}
	return outs
}

// optedIn reports whether the capture's client declared Subagent Sessions
// (S0: either spelling).
func optedIn(recs []pipe.Record) bool {
	for _, rec := range recs {
		env := pipe.Peek(rec.Frame)
		if rec.From != pipe.Client || env.Kind != pipe.Request || string(env.Method) != "initialize" {
			continue
		}
		if v, ok := rawjson.Lookup(rec.Frame, "params", "clientCapabilities", "subagents"); ok && rawjson.FirstByte(v) == '{' {
			return true
		}
		if v, ok := rawjson.Lookup(rec.Frame, "params", "clientCapabilities", "_meta", "subagents"); ok && string(v) == "true" {
			return true
		}
	}
	return false
}

// withOptIn returns recs with clientCapabilities.subagents:{} in the
// client's initialize.
func withOptIn(t *testing.T, recs []pipe.Record) []pipe.Record {
	t.Helper()
	out := slices.Clone(recs)
	for i, rec := range out {
		if env := pipe.Peek(rec.Frame); rec.From == pipe.Client && string(env.Method) == "initialize" {
			f, err := rawjson.Set(rec.Frame, []byte("{}"), "params", "clientCapabilities", "subagents")
			if err != nil {
				t.Fatal(err)
			}
			out[i].Frame = f
		}
	}
	return out
}

// compact renders outputs as Format does, with a frame forwarded as it
// came (P1, checked by TestVendorCaptures) shown as its input's seq.
func compact(outs []routetest.Output) []byte {
	var b bytes.Buffer
	for _, o := range outs {
		if o.Op == "" && o.In.Seq != 0 {
			fmt.Fprintf(&b, `{"to":%q,"seq":%d}`+"\n", o.To.String(), o.In.Seq)
			continue
		}
		b.Write(routetest.Format([]routetest.Output{o}))
	}
	return b.Bytes()
}

// frameFacts is what checkSessions reads of one client-bound frame.
type frameFacts struct {
	method, session, tag string
	update               []byte
	described            []byte // params.update or params.toolCall
}

func factsOf(frame []byte) frameFacts {
	var ff frameFacts
	ff.method = string(pipe.Peek(frame).Method)
	ff.session, _ = rawjson.LookupString(frame, "params", "sessionId")
	ff.update, _ = rawjson.Lookup(frame, "params", "update")
	ff.tag, _ = rawjson.LookupString(ff.update, "sessionUpdate")
	ff.described = routetest.Described(frame)
	return ff
}

// sessionLinks returns the {"type":"session"} blocks' sessionIds in a
// tool call update's content.
func sessionLinks(update []byte) []string {
	content, _ := rawjson.Lookup(update, "content")
	var ids []string
	_ = rawjson.Elements(content, func(el []byte) bool {
		if typ, _ := rawjson.LookupString(el, "type"); typ == "session" {
			id, _ := rawjson.LookupString(el, "sessionId")
			ids = append(ids, id)
		}
		return true
	})
	return ids
}

// childSessions is what checkSessions learns of the child sessions.
type childSessions struct {
	announced map[string]int    // child -> output index of its first subagent_update
	state     map[string]string // child -> last state ("idle/end_turn", "running")
	callChild map[string]string // toolCallId -> child linked from its content
	synth     map[string]bool   // children the proxy made
}

// checkSessions checks an opted-in replay (see TestCaptures).
func checkSessions(t *testing.T, schema *rewritetest.Schema, outs []routetest.Output) {
	t.Helper()
	cs := childSessions{announced: map[string]int{}, state: map[string]string{}, callChild: map[string]string{}, synth: map[string]bool{}}
	seenSession := map[string]int{}    // sessionId -> first output index naming it
	firstCallFrame := map[string]int{} // toolCallId -> first output index of a launch-call frame
	lastStatus := map[string]string{}  // toolCallId -> last snapshot status
	var linked []struct {
		i                 int
		parent, sessionID string
	}
	for i, o := range outs {
		if o.To != pipe.Client {
			continue
		}
		if m := string(pipe.Peek(o.Frame).Method); strings.HasPrefix(m, "_") {
			// An extension method: ACP lets a client ignore it, and no
			// schema has it (the vendor's _auth/status_update, ...).
		} else if err := schema.Validate(o.Frame); err != nil {
			t.Errorf("P3: output %d (op %q) fails the ACP schema: %v\n%s", i+1, o.Op, err, o.Frame)
		}
		ff := factsOf(o.Frame)
		if ff.session != "" {
			if _, ok := seenSession[ff.session]; !ok {
				seenSession[ff.session] = i
			}
		}
		switch ff.tag {
		case "subagent_update":
			child, _ := rawjson.LookupString(ff.update, "sessionId")
			if _, ok := cs.announced[child]; !ok {
				cs.announced[child] = i
				if at, named := seenSession[child]; named {
					t.Errorf("output %d announces child %s after output %d named it", i+1, child, at+1)
				}
				cs.synth[child] = strings.HasPrefix(child, "acp-normalize-subagent-")
			}
			if st, ok := rawjson.Lookup(ff.update, "state"); ok {
				s, _ := rawjson.LookupString(st, "state")
				if r, ok := rawjson.LookupString(st, "stopReason"); ok {
					s += "/" + r
				}
				cs.state[child] = s
			}
		case "tool_call", "tool_call_update":
			id, _ := rawjson.LookupString(ff.update, "toolCallId")
			if st, ok := rawjson.LookupString(ff.update, "_meta", "acp-normalize", "subagent", "status"); ok {
				if _, seen := firstCallFrame[id]; !seen {
					firstCallFrame[id] = i
				}
				lastStatus[id] = st
			}
			for _, child := range sessionLinks(ff.update) {
				if _, ok := cs.announced[child]; !ok {
					t.Errorf("output %d links child %s that was never announced", i+1, child)
				}
				if prev, ok := cs.callChild[id]; ok && prev != child {
					t.Errorf("S4: tool call %s links two children, %s and %s (one per subagent)", id, prev, child)
				}
				cs.callChild[id] = child
			}
		}
		if p, ok := rawjson.LookupString(ff.described, "_meta", "acp-normalize", "parentToolCallId"); ok {
			linked = append(linked, struct {
				i                 int
				parent, sessionID string
			}{i, p, ff.session})
		}
	}
	for id, at := range firstCallFrame {
		child, ok := cs.callChild[id]
		if !ok {
			t.Errorf("S4: launch call %s got no child session", id)
			continue
		}
		if cs.synth[child] && cs.announced[child] > at && !cursorFallback(outs, at) {
			t.Errorf("S4: child %s of %s announced at output %d, after the call's first frame %d", child, id, cs.announced[child]+1, at+1)
		}
		if !cs.synth[child] {
			continue // the agent's own: its state is the agent's
		}
		if want := wantState(lastStatus[id]); cs.state[child] != want {
			t.Errorf("S4: child %s of %s ends %q, want %q (snapshot status %s)", child, id, cs.state[child], want, lastStatus[id])
		}
	}
	for _, l := range linked {
		if child, ok := cs.callChild[l.parent]; ok && cs.synth[child] && l.sessionID != child {
			t.Errorf("S5: output %d is linked to %s but arrives on session %s, not its child %s", l.i+1, l.parent, l.sessionID, child)
		}
	}
}

// cursorFallback reports whether the launch call whose first frame is
// outs[at] is Cursor's: with its native child sessions on (the default),
// the proxy waits for Cursor's own and makes one only when the call ends
// without it (S2).
func cursorFallback(outs []routetest.Output, at int) bool {
	v, _ := rawjson.LookupString(routetest.Described(outs[at].Frame), "_meta", "acp-normalize", "subagent", "vendor")
	return v == "cursor"
}

// wantState is S4's state for a snapshot status.
func wantState(status string) string {
	switch status {
	case "completed":
		return "idle/end_turn"
	case "cancelled":
		return "idle/cancelled"
	case "failed":
		return "idle"
	}
	return "running"
}

// checkNoSessionShapes checks a replay for a client that did not opt in:
// no subagent_update, session_message(_chunk) or session link reaches it
// (P3), and the agent got no opt-in (S0).
func checkNoSessionShapes(t *testing.T, outs []routetest.Output) {
	t.Helper()
	for i, o := range outs {
		ff := factsOf(o.Frame)
		if o.To == pipe.Agent && ff.method == "initialize" {
			if _, ok := rawjson.Lookup(o.Frame, "params", "clientCapabilities", "_meta", "subagents"); ok {
				t.Errorf("S0: the agent was asked for child sessions for a client that did not opt in: %s", o.Frame)
			}
		}
		if o.To != pipe.Client {
			continue
		}
		switch ff.tag {
		case "subagent_update", "session_message", "session_message_chunk", "subagent_spawned", "subagent_state_update":
			t.Errorf("P3: output %d is a %s for a client that did not opt in", i+1, ff.tag)
		}
		if links := sessionLinks(ff.update); len(links) > 0 {
			t.Errorf("P3: output %d links child sessions %v for a client that did not opt in", i+1, links)
		}
	}
}

// lines is for debugging a failure: the outputs as text.
func lines(outs []routetest.Output) string {
	var b strings.Builder
	for i, o := range outs {
		b.WriteString(strconv.Itoa(i+1) + " " + o.To.String() + " " + string(o.Frame) + "\n")
	}
	return b.String()
}

var _ = json.Valid
var _ = lines

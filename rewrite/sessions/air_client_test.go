package sessions_test

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite/rewritetest"
	"github.com/acp-normalize/acp-normalize/route/routetest"
)

// airDeclaration is what JetBrains AIR declares in its initialize
// (editor shapes §2, from the Claude and Codex adapters' AIR contract:
// JetBrains AIR itself is closed source and was not run here).
const (
	airNativeDecl = `{"version":1,"capabilities":["diffPatch","nativeSubagentSessions"]}`
	airMarkerDecl = `{"version":1,"capabilities":["diffPatch"]}`
)

// asClient returns recs with the client's initialize declaring air (nil:
// nothing of AIR) and neither spelling of the Subagent Sessions opt-in.
func asClient(t *testing.T, recs []pipe.Record, air []byte) []pipe.Record {
	t.Helper()
	out := slices.Clone(recs)
	for i, rec := range out {
		if env := pipe.Peek(rec.Frame); rec.From != pipe.Client || string(env.Method) != "initialize" {
			continue
		}
		f := rec.Frame
		caps := []string{"params", "clientCapabilities"}
		for _, p := range [][]string{append(caps, "subagents"), append(caps, "_meta", "subagents")} {
			if _, ok := rawjson.Lookup(f, p...); ok {
				var err error
				if f, err = rawjson.Delete(f, p...); err != nil {
					t.Fatal(err)
				}
			}
		}
		if air != nil {
			var err error
			if f, err = rawjson.Set(f, air, append(caps, "_meta", "jetbrains", "air")...); err != nil {
				t.Fatal(err)
			}
		}
		out[i].Frame = f
	}
	return out
}

// airClient is a scripted JetBrains AIR client (editor shapes §2): it
// knows the sessions it made or loaded and the child sessions announced
// to it by subagent_spawned on a session it knows, reads the draft
// dialect and standard ACP, and drops what it cannot place. It records
// what a user would see.
type airClient struct {
	t      *testing.T
	schema *rewritetest.Schema
	own    map[string]bool   // sessions the client created or loaded
	parent map[string]string // child -> the session it was spawned on
	end    map[string]string // child -> its subagent_state_update state
	launch map[string]string // child -> the launch call it belongs to ("" when none is named)
	synth  map[string]bool   // children whose spawn the proxy made (named in _meta["acp-normalize"])
	asked  map[string]bool   // ids of the client's session/new and session/fork
	status map[string]string // launch toolCallId -> last snapshot status
	linked []linkedFrame     // frames linked to a launch call, and the session they came on
	got    map[int64]bool    // input seqs of the frames the client got
}

type linkedFrame struct {
	i                 int
	parent, sessionID string
}

func newAirClient(t *testing.T, schema *rewritetest.Schema) *airClient {
	return &airClient{t: t, schema: schema, own: map[string]bool{}, parent: map[string]string{}, end: map[string]string{},
		launch: map[string]string{}, synth: map[string]bool{}, asked: map[string]bool{}, status: map[string]string{}, got: map[int64]bool{}}
}

func (a *airClient) knows(sid string) bool { _, child := a.parent[sid]; return a.own[sid] || child }

// read takes the outputs of one replay in order.
func (a *airClient) read(outs []routetest.Output) {
	t := a.t
	for i, o := range outs {
		env := pipe.Peek(o.Frame)
		if o.To == pipe.Agent {
			if o.In.From == pipe.Client && env.Kind == pipe.Request {
				switch m := string(env.Method); m {
				case "session/new", "session/fork":
					a.asked[string(env.ID)] = true
				default:
					if sid, ok := rawjson.LookupString(env.Params, "sessionId"); ok && m != "session/prompt" || ok && a.own[sid] {
						a.own[sid] = true
					}
				}
			}
			continue
		}
		a.got[o.In.Seq] = true
		if env.Kind == pipe.Response {
			if a.asked[string(env.ID)] {
				if sid, ok := rawjson.LookupString(o.Frame, "result", "sessionId"); ok {
					a.own[sid] = true
				}
			}
			continue
		}
		ff := factsOf(o.Frame)
		if ff.method != "session/update" {
			if strings.HasPrefix(ff.method, "_") {
				continue
			}
			if err := a.schema.Validate(o.Frame); err != nil {
				t.Errorf("output %d fails the ACP schema: %v\n%s", i+1, err, o.Frame)
			}
			if ff.session != "" && !a.knows(ff.session) && env.Kind == pipe.Request {
				t.Errorf("output %d: AIR cannot answer a %s on session %s, which it does not know: the turn stalls", i+1, ff.method, ff.session)
			}
			a.noteLinked(i, ff)
			continue
		}
		if !a.knows(ff.session) {
			t.Errorf("output %d: a session/update on %s, a session AIR does not know, is lost:\n%s", i+1, ff.session, o.Frame)
			continue
		}
		switch ff.tag {
		case "subagent_spawned":
			a.spawned(i, ff)
		case "subagent_state_update":
			child, _ := rawjson.LookupString(ff.update, "subagentSessionId")
			state, _ := rawjson.LookupString(ff.update, "state")
			switch {
			case a.parent[child] == "" && !a.knows(child):
				t.Errorf("output %d: the end of %s, never spawned", i+1, child)
			case a.parent[child] != ff.session:
				t.Errorf("output %d: the end of %s on %s, not on its parent %s", i+1, child, ff.session, a.parent[child])
			case a.end[child] != "":
				t.Errorf("output %d: a second end of %s (%s after %s)", i+1, child, state, a.end[child])
			case !slices.Contains([]string{"completed", "failed", "cancelled", "disconnected"}, state):
				t.Errorf("output %d: the end of %s is %q, no draft state", i+1, child, state)
			}
			a.end[child] = state
		case "subagent_update", "session_message", "session_message_chunk":
			t.Errorf("output %d: a %s reached AIR, which reads the draft dialect", i+1, ff.tag)
		default:
			if err := a.schema.Validate(o.Frame); err != nil {
				t.Errorf("output %d fails the ACP schema: %v\n%s", i+1, err, o.Frame)
			}
			if st, ok := rawjson.LookupString(ff.update, "_meta", "acp-normalize", "subagent", "status"); ok {
				id, _ := rawjson.LookupString(ff.update, "toolCallId")
				a.status[id] = st
			}
			a.noteLinked(i, ff)
		}
	}
}

func (a *airClient) noteLinked(i int, ff frameFacts) {
	if p, ok := rawjson.LookupString(ff.described, "_meta", "acp-normalize", "parentToolCallId"); ok {
		a.linked = append(a.linked, linkedFrame{i, p, ff.session})
	}
}

// spawned checks a subagent_spawned as AIR's draft reader would.
func (a *airClient) spawned(i int, ff frameFacts) {
	t := a.t
	child, _ := rawjson.LookupString(ff.update, "subagentSessionId")
	name, okName := rawjson.LookupString(ff.update, "name")
	task, okTask := rawjson.LookupString(ff.update, "task")
	caps, okCaps := rawjson.Lookup(ff.update, "capabilities")
	if child == "" || !okName || !okTask || !okCaps || rawjson.FirstByte(caps) != '{' || name == "" || task == "" {
		t.Errorf("output %d: a subagent_spawned AIR cannot read (subagentSessionId, name, task, capabilities): %s", i+1, ff.update)
	}
	if p, ok := rawjson.Lookup(ff.update, "prompt"); ok && rawjson.FirstByte(p) != '"' {
		t.Errorf("output %d: prompt is no string: %s", i+1, ff.update)
	}
	for _, k := range []string{"cancel", "close"} {
		if v, ok := rawjson.Lookup(caps, k); ok && string(v) != "true" && string(v) != "false" {
			t.Errorf("output %d: capabilities.%s is %s, AIR reads a boolean", i+1, k, v)
		}
	}
	if a.knows(child) {
		t.Errorf("output %d: %s spawned again, or after a frame named it", i+1, child)
	}
	a.parent[child] = ff.session
	if id, ok := rawjson.LookupString(ff.update, "_meta", "acp-normalize", "toolCallId"); ok {
		a.launch[child], a.synth[child] = id, true
	} else if id, ok := rawjson.LookupString(ff.update, "_meta", "cursor", "toolCallId"); ok {
		a.launch[child] = id
	}
}

// airEnd is the draft end AIR must get for a launch call's last snapshot
// status ("" when the subagent may run on).
func airEnd(status string) string {
	switch status {
	case "completed", "cancelled", "failed":
		return status
	}
	return ""
}

// TestJ1AIRClient runs every capture of every vendor through the proxy
// to a scripted JetBrains AIR client that declares nativeSubagentSessions
// (rule J1): every subagent arrives as a native child session in the
// draft form, announced before any frame of it, with its end state;
// the frames linked to a launch call arrive on its child; every request
// names a session AIR knows (so it can be answered); no frame that
// reaches a client without AIR is lost; every standard frame is valid
// against the ACP schema (the draft kinds are no schema's: their fields
// are checked as AIR's reader does). The replays are pinned byte for
// byte in testdata/captures/<vendor>-<capture>.air.sessions.jsonl (go
// test -update rewrites them).
func TestJ1AIRClient(t *testing.T) {
	schema := rewritetest.LoadSchema(t)
	files, err := filepath.Glob(filepath.Join(capturesRoot, "*", "*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var n, subagents int
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
				recs[i].Seq = int64(i + 1)
			}
		}
		n++
		t.Run(vendor+"/"+name, func(t *testing.T) {
			outs := routeRecords(t, asClient(t, recs, []byte(airNativeDecl)))
			plain := routeRecords(t, asClient(t, recs, nil))
			rewritetest.CheckFile(t, filepath.Join("testdata", "captures", vendor+"-"+name+".air.sessions.jsonl"), compact(outs))
			a := newAirClient(t, schema)
			a.read(outs)
			checkAirAnswer(t, outs)
			launches := map[string]string{} // launch call -> its child
			for child, id := range a.launch {
				if id == "" {
					continue
				}
				if prev, ok := launches[id]; ok {
					t.Errorf("launch call %s has two children, %s and %s", id, prev, child)
				}
				launches[id] = child
			}
			for id, st := range a.status {
				child, ok := launches[id]
				if !ok {
					t.Errorf("launch call %s (last status %s) got no child session", id, st)
					continue
				}
				subagents++
				if want := airEnd(st); want != "" && a.end[child] != want {
					t.Errorf("child %s of %s ends %q, want %q (snapshot status %s)", child, id, a.end[child], want, st)
				}
				if want := airEnd(st); want == "" && (a.end[child] == "completed" || a.end[child] == "failed") {
					t.Errorf("child %s of %s ends %q while its call says %s", child, id, a.end[child], st)
				}
			}
			t.Logf("%d children, ends %v, launch calls %v", len(a.parent), a.end, a.status)
			for _, l := range a.linked {
				if child, ok := launches[l.parent]; ok && a.synth[child] && l.sessionID != child {
					t.Errorf("output %d is linked to %s but arrives on %s, not its child %s", l.i+1, l.parent, l.sessionID, child)
				}
			}
			for _, o := range plain {
				if o.To == pipe.Client && !a.got[o.In.Seq] {
					t.Errorf("a frame a client without AIR gets is lost for AIR (input %d): %s", o.In.Seq, o.Frame)
				}
			}
			for _, rec := range recs {
				env := pipe.Peek(rec.Frame)
				sid, _ := rawjson.LookupString(env.Params, "sessionId")
				if rec.From == pipe.Agent && a.parent[sid] != "" && !a.got[rec.Seq] {
					t.Errorf("a frame of child %s (input %d) is lost for AIR: %s", sid, rec.Seq, rec.Frame)
				}
			}
		})
	}
	if n == 0 || subagents == 0 {
		t.Fatalf("%d captures, %d subagents", n, subagents)
	}
}

// checkAirAnswer checks that AIR learns from the initialize answer that
// native child sessions are on.
func checkAirAnswer(t *testing.T, outs []routetest.Output) {
	t.Helper()
	for _, o := range outs {
		if o.To != pipe.Client {
			continue
		}
		if _, ok := rawjson.Lookup(o.Frame, "result", "agentCapabilities"); !ok {
			continue
		}
		list, _ := rawjson.Lookup(o.Frame, "result", "_meta", "jetbrains", "air", "capabilities")
		if !bytes.Contains(list, []byte(`"nativeSubagentSessions"`)) {
			t.Errorf("the initialize answer does not name nativeSubagentSessions: %s", o.Frame)
		}
		return
	}
	t.Error("no initialize answer")
}

// TestJ1AIRMarker: AIR without nativeSubagentSessions gets every frame a
// client without AIR gets, each launch call's frames with
// _meta.jetbrains.air = {"version":1,"subagent":true} besides, and
// nothing else changed; no session shape and no draft (P3).
func TestJ1AIRMarker(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(capturesRoot, "*", "*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	marked := 0
	for _, path := range files {
		if strings.HasSuffix(path, ".replay.jsonl") {
			continue
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		recs := routetest.ReadRecords(t, data)
		t.Run(filepath.Base(filepath.Dir(path))+"/"+filepath.Base(path), func(t *testing.T) {
			outs := routeRecords(t, asClient(t, recs, []byte(airMarkerDecl)))
			plain := routeRecords(t, asClient(t, recs, nil))
			checkNoSessionShapes(t, outs)
			if len(outs) != len(plain) {
				t.Fatalf("%d outputs, %d without AIR", len(outs), len(plain))
			}
			for i, o := range outs {
				if o.To != plain[i].To {
					t.Fatalf("output %d goes to %s, without AIR to %s", i+1, o.To, plain[i].To)
				}
				if string(pipe.Peek(o.Frame).Method) == "initialize" {
					continue // the client's own initialize differs
				}
				frame := o.Frame
				obj := routetest.Described(frame)
				if _, launch := rawjson.Lookup(obj, "_meta", "acp-normalize", "subagent"); launch {
					air, _ := rawjson.Lookup(obj, "_meta", "jetbrains", "air")
					if string(air) != `{"version":1,"subagent":true}` {
						t.Errorf("output %d: a launch call frame without the AIR marker: %s", i+1, frame)
						continue
					}
					marked++
					path := []string{"params", "update", "_meta", "jetbrains"}
					if string(pipe.Peek(frame).Method) == "session/request_permission" {
						path[1] = "toolCall"
					}
					if frame, err = rawjson.Delete(frame, path...); err != nil {
						t.Fatal(err)
					}
				}
				if !bytes.Equal(frame, plain[i].Frame) {
					t.Errorf("output %d differs from a client without AIR beyond the marker:\n%s\n%s", i+1, o.Frame, plain[i].Frame)
				}
			}
		})
	}
	if marked == 0 {
		t.Fatal("no launch call marked")
	}
}

package routetest

import (
	"bytes"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/rewrite/meta"
	"github.com/acp-normalize/acp-normalize/rewrite/rewritetest"
)

// CaptureWant is what a vendor module must make of one real capture.
// Re-recording changes every id the agent or the fake model makes up
// (session and tool call ids, child ids) and every timing: a want names
// none of them, so that `make captures` then `go test -update` is all a
// new recording needs (capture/README.md).
type CaptureWant struct {
	// Snapshots is the last snapshot of each launch call, by
	// "sessionId/toolCallId" (rules M, V2): a key "*/toolCallId" matches
	// any session, "*/*" the recording's only launch call whatever its
	// ids, and a value Any any value of a field that is present.
	Snapshots map[string]map[string]any
	// Parents counts the frames that carry each parentToolCallId (V4); a
	// key "*" is the recording's only parent, whatever its id: its launch
	// call, when the recording has launch calls with snapshots.
	Parents map[string]int
	// Emits is the number of frames the module adds (V5).
	Emits int
	// Launch, when set, tells whether the object an agent frame describes
	// (params.update, params.toolCall) opens or updates a launch call, by
	// the vendor's own fields (docs/<vendor>.md): every frame of such a
	// call the client receives must carry the snapshot, and no other call
	// gets one (V2).
	Launch func(obj []byte) bool
	// Check, when set, checks more of what the module made of the
	// recording (recs, its input records) in outs.
	Check func(t *testing.T, recs []pipe.Record, outs []Output)
}

// CheckCapture replays the capture at path through mod alone and
// checks it against want and against a run without modules: the module
// never drops or reorders a frame; a frame it leaves alone is
// byte-identical (P1); a frame it changes differs only by the
// _meta["acp-normalize"] member of the object it describes and, where
// rule V3 applies, that object's title (M, V3), and now carries a
// snapshot or a parent link; every frame it wrote to the client matches
// the ACP schema (P3). It returns the outputs.
func CheckCapture(t *testing.T, path string, mod rewrite.Module, want CaptureWant) []Output {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	schema := rewritetest.LoadSchema(t)
	recs := ReadRecords(t, data)
	outs := Route(t, recs, nil, mod)
	plain := Route(t, recs, nil, Inert(mod.Name))
	var kept []Output
	emits := 0
	for _, o := range outs {
		if o.Op == pipe.OpEmit {
			emits++
			if !json.Valid(o.Frame) {
				t.Errorf("an emitted frame is not JSON: %s", o.Frame)
			} else if o.To == pipe.Client {
				schema.Check(t, o.Frame)
			}
			continue
		}
		kept = append(kept, o)
	}
	if emits != want.Emits {
		t.Errorf("%d frames emitted, want %d", emits, want.Emits)
	}
	if len(kept) != len(plain) {
		t.Fatalf("%d frames with the module, %d without: the module must never drop or add a frame in place", len(kept), len(plain))
	}
	parents := map[string]int{}
	for i, o := range kept {
		p := plain[i]
		if o.To != p.To || o.In.Seq != p.In.Seq {
			t.Fatalf("output %d goes elsewhere with the module", i+1)
		}
		if bytes.Equal(o.Frame, p.Frame) {
			if o.Op != "" && o.Op != p.Op {
				t.Errorf("output %d: unchanged frame marked %q", i+1, o.Op)
			}
			continue
		}
		if !json.Valid(o.Frame) {
			t.Errorf("output %d is not JSON: %s", i+1, o.Frame)
			continue
		}
		if back := undo(t, o.Frame, p.Frame); !bytes.Equal(back, p.Frame) {
			t.Errorf("output %d differs by more than _meta[\"acp-normalize\"] and the title:\n%s\n%s", i+1, p.Frame, o.Frame)
		}
		obj := Described(o.Frame)
		_, snap := rawjson.Lookup(obj, "_meta", meta.Key, meta.SubagentMember)
		v, parent := rawjson.Lookup(obj, "_meta", meta.Key, meta.ParentMember)
		if !snap && !parent {
			t.Errorf("output %d changed without a snapshot or a parent link: %s", i+1, o.Frame)
		}
		if parent {
			var s string
			_ = json.Unmarshal(v, &s)
			parents[s]++
		}
		if o.To == pipe.Client {
			schema.CheckOutput(t, o.Op, o.In.Frame, o.Frame)
		}
	}
	snaps := Snapshots(t, outs)
	if want.Launch != nil {
		checkLaunchFrames(t, want.Launch, outs)
	}
	if want.Parents == nil {
		want.Parents = map[string]int{}
	}
	if got := wildParents(parents, want.Parents, snaps); !reflect.DeepEqual(got, want.Parents) {
		t.Errorf("frames with parentToolCallId: got %v, want %v", got, want.Parents)
	}
	if want.Snapshots == nil {
		want.Snapshots = map[string]map[string]any{}
	}
	if got := wildcards(snaps, want.Snapshots); !reflect.DeepEqual(got, want.Snapshots) {
		g, _ := json.MarshalIndent(got, "", "  ")
		w, _ := json.MarshalIndent(want.Snapshots, "", "  ")
		t.Errorf("last snapshots:\ngot  %s\nwant %s", g, w)
	}
	if want.Check != nil {
		want.Check(t, recs, outs)
	}
	return outs
}

// checkLaunchFrames checks rule V2 with the vendor's own test of a launch
// call: the calls whose agent frames launch says are launch calls, by
// "sessionId/toolCallId", are exactly those whose frames reach the
// client with a snapshot, every one of them.
func checkLaunchFrames(t *testing.T, launch func(obj []byte) bool, outs []Output) {
	t.Helper()
	calls := map[string]bool{}
	for _, o := range outs {
		if obj := Described(o.In.Frame); o.In.From == pipe.Agent && obj != nil && launch(obj) {
			calls[callKey(o.In.Frame, obj)] = true
		}
	}
	for i, o := range outs {
		obj := Described(o.Frame)
		if o.To != pipe.Client || obj == nil {
			continue
		}
		_, snap := rawjson.Lookup(obj, "_meta", meta.Key, meta.SubagentMember)
		if isLaunch := calls[callKey(o.Frame, obj)]; isLaunch != snap {
			t.Errorf("V2: output %d is of a launch call: %v, carries a snapshot: %v: %s", i+1, isLaunch, snap, o.Frame)
		}
	}
}

// callKey names the tool call obj of frame describes: "sessionId/toolCallId".
func callKey(frame, obj []byte) string {
	session, _ := rawjson.LookupString(frame, "params", "sessionId")
	id, _ := rawjson.LookupString(obj, "toolCallId")
	return session + "/" + id
}

// undo removes from frame what a module may add to the object it
// describes: the "acp-normalize" member of its _meta (and a _meta left
// empty), and a changed title, which gets the plain frame's back.
func undo(t *testing.T, frame, plain []byte) []byte {
	t.Helper()
	var path []string
	switch env := pipe.Peek(frame); {
	case env.MethodIs("session/update"):
		path = []string{"params", "update"}
	case env.MethodIs("session/request_permission"):
		path = []string{"params", "toolCall"}
	default:
		return frame
	}
	out, err := rawjson.Delete(frame, append(path, "_meta", "acp-normalize")...)
	if err != nil {
		t.Fatal(err)
	}
	if m, ok := rawjson.Lookup(out, append(path, "_meta")...); ok && string(m) == "{}" {
		if _, had := rawjson.Lookup(plain, append(path, "_meta")...); !had {
			out, _ = rawjson.Delete(out, append(path, "_meta")...)
		}
	}
	title, had := rawjson.Lookup(plain, append(path, "title")...)
	switch _, has := rawjson.Lookup(out, append(path, "title")...); {
	case had:
		out, err = rawjson.Set(out, title, append(path, "title")...)
	case has:
		out, err = rawjson.Delete(out, append(path, "title")...)
	}
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Inert is a module named name that never acts, so that a run with it
// advertises the same module list as a run with the real one.
func Inert(name string) rewrite.Module {
	return rewrite.Module{Name: name, Doc: "inert", Triggers: []string{"\x00"},
		New: func(rewrite.Env) rewrite.Rewriter { return inertRewriter{} }}
}

type inertRewriter struct{}

func (inertRewriter) Rewrite(*rewrite.Frame) (rewrite.Verdict, error) { return rewrite.Verdict{}, nil }

// OneLaunch is the CaptureWant.Snapshots of a recording with one launch
// call, whatever its ids ("*/*"): the fields of every map, a later map's
// winning.
func OneLaunch(fields ...map[string]any) map[string]map[string]any {
	return map[string]map[string]any{"*/*": Fields(fields...)}
}

// Fields merges snapshot fields into a new map, a later map's winning.
func Fields(fields ...map[string]any) map[string]any {
	s := map[string]any{}
	for _, f := range fields {
		maps.Copy(s, f)
	}
	return s
}

// Any, as a value in CaptureWant.Snapshots, matches any value of a field
// that is present.
const Any = "<any>"

// wildcards rewrites got for the wildcards of want: a session of a
// "*/toolCallId" key becomes "*", the one other key becomes "*/*" when
// want has it, and a field that want says is Any gets the value Any.
func wildcards(got, want map[string]map[string]any) map[string]map[string]any {
	keys := map[string]string{}
	var rest []string
	for key := range got {
		keys[key] = key
		if _, id, ok := strings.Cut(key, "/"); ok {
			if _, wild := want["*/"+id]; wild {
				keys[key] = "*/" + id
				continue
			}
		}
		rest = append(rest, key)
	}
	if _, wild := want["*/*"]; wild && len(rest) == 1 {
		keys[rest[0]] = "*/*"
	}
	out := map[string]map[string]any{}
	for key, snap := range got {
		key = keys[key]
		for field := range snap {
			if want[key][field] == Any {
				snap[field] = Any
			}
		}
		out[key] = snap
	}
	return out
}

// wildParents counts got's only parent under "*" when want has that key
// and the parent is a launch call with a snapshot in snaps, or snaps has
// none (standard child sessions link to a call without one).
func wildParents(got, want map[string]int, snaps map[string]map[string]any) map[string]int {
	if _, wild := want["*"]; !wild || len(got) != 1 {
		return got
	}
	for p, n := range got {
		for key := range snaps {
			if _, id, _ := strings.Cut(key, "/"); id == p {
				return map[string]int{"*": n}
			}
		}
		if len(snaps) == 0 {
			return map[string]int{"*": n}
		}
	}
	return got
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
			got, want := Format(Route(t, recs, nil, m)), Format(Route(t, recs, nil, Inert(m.Name)))
			if !bytes.Equal(got, want) {
				t.Errorf("module %s changed %s:\n%s", m.Name, path, rewritetest.LineDiff(want, got))
			}
		})
	}
}

// CheckCaptures runs CheckCapture on every recording dir/*.jsonl (the
// .replay.jsonl goldens left out) with the case named by its file name,
// fails on a recording without a case, and compares the replay through
// mod alone with the .replay.jsonl golden beside the recording, byte for
// byte (R3; go test -update rewrites it). isLaunch, the vendor's test of
// a launch call's tool call object, is every case's Launch (V2: every
// frame of the launch call carries the snapshot). Then it checks every
// recording re-encoded and with duplicate keys (CheckCapturesDifferential).
func CheckCaptures(t *testing.T, dir string, mod rewrite.Module, isLaunch func(obj []byte) bool, cases map[string]CaptureWant) {
	files, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	files = slices.DeleteFunc(files, func(f string) bool { return strings.HasSuffix(f, ".replay.jsonl") })
	if len(files) == 0 {
		t.Fatalf("no recordings under %s", dir)
	}
	for _, f := range files {
		name := filepath.Base(f)
		t.Run(strings.TrimSuffix(name, ".jsonl"), func(t *testing.T) {
			want, ok := cases[name]
			if !ok {
				t.Fatalf("recording %s has no case", name)
			}
			want.Launch = isLaunch
			outs := CheckCapture(t, f, mod, want)
			rewritetest.CheckFile(t, strings.TrimSuffix(f, ".jsonl")+".replay.jsonl", Format(outs))
		})
	}
	t.Run("differential", func(t *testing.T) { CheckCapturesDifferential(t, dir, mod) })
}

// WithoutMeta returns frame without the _meta["acp-normalize"] member of
// the object at obj, and without that object's _meta when nothing else
// is left in it: the frame as it was before a module added a snapshot.
func WithoutMeta(t testing.TB, frame []byte, obj ...string) []byte {
	t.Helper()
	out, err := rawjson.Delete(frame, append(obj, "_meta", meta.Key)...)
	if err != nil {
		t.Fatal(err)
	}
	if m, ok := rawjson.Lookup(out, append(obj, "_meta")...); ok && string(m) == "{}" {
		if out, err = rawjson.Delete(out, append(obj, "_meta")...); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

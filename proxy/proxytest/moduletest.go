package proxytest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/proxy"
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/rewrite/rewritetest"
)

// Version is the version the test routers advertise (rule M).
const Version = "0.0.0-test"

// ReadRecords reads the input records of a capture; stderr records are
// skipped (they are on neither protocol stream).
func ReadRecords(t testing.TB, data []byte) []pipe.Record {
	t.Helper()
	cr := pipe.NewCaptureReader(bytes.NewReader(data))
	var recs []pipe.Record
	for {
		rec, err := cr.Next()
		if errors.Is(err, io.EOF) {
			return recs
		}
		if err != nil {
			t.Fatalf("reading capture: %v", err)
		}
		if rec.IsInput() && rec.Stderr == nil {
			recs = append(recs, rec)
		}
	}
}

// Output is one frame the router wrote, with the input that caused it.
type Output struct {
	proxy.Out
	In pipe.Record
}

// Route runs records through a Router with mods, as the live proxy would.
func Route(t testing.TB, recs []pipe.Record, logger *slog.Logger, mods ...rewrite.Module) []Output {
	t.Helper()
	return RouteConfig(t, recs, proxy.RouterConfig{Modules: mods, Logger: logger})
}

// RouteConfig is Route with a whole router configuration (settings,
// caps); the advertised version is Version when cfg gives none.
func RouteConfig(t testing.TB, recs []pipe.Record, cfg proxy.RouterConfig) []Output {
	t.Helper()
	if cfg.Version == "" {
		cfg.Version = Version
	}
	r, err := proxy.NewRouter(cfg)
	if err != nil {
		t.Fatalf("NewRouter: %v", err)
	}
	var outs []Output
	var buf []proxy.Out
	for _, rec := range recs {
		raw := rec.Frame
		if raw == nil && rec.Text != nil {
			raw = []byte(*rec.Text)
		}
		buf = r.Handle(rec.From, raw, buf[:0])
		for _, o := range buf {
			o.Frame = bytes.Clone(o.Frame)
			outs = append(outs, Output{Out: o, In: rec})
		}
	}
	return outs
}

// Format renders outputs as replay lines with their op:
// {"to":"client","op":"replace","frame":...}.
func Format(outs []Output) []byte {
	var b bytes.Buffer
	for _, o := range outs {
		b.WriteString(`{"to":"` + o.To.String() + `"`)
		if o.Op != "" {
			b.WriteString(`,"op":"` + o.Op + `"`)
		}
		if json.Valid(o.Frame) {
			b.WriteString(`,"frame":`)
			b.Write(o.Frame)
		} else {
			b.WriteString(`,"text":`)
			b.Write(rawjson.Text(string(o.Frame)))
		}
		b.WriteString("}\n")
	}
	return b.Bytes()
}

// Described returns the object of a frame that _meta additions describe:
// params.update of a session/update, params.toolCall of a permission
// request; nil for any other frame.
func Described(frame []byte) []byte {
	env := pipe.Peek(frame)
	var obj []byte
	switch {
	case env.MethodIs("session/update"):
		obj, _ = rawjson.Lookup(frame, "params", "update")
	case env.MethodIs("session/request_permission"):
		obj, _ = rawjson.Lookup(frame, "params", "toolCall")
	}
	return obj
}

// Snapshots returns the last subagent snapshot the client received for
// each launch call, by "sessionId/toolCallId".
func Snapshots(t testing.TB, outs []Output) map[string]map[string]any {
	t.Helper()
	last := map[string]map[string]any{}
	for _, o := range outs {
		if o.To != pipe.Client {
			continue
		}
		obj := Described(o.Frame)
		snap, ok := rawjson.Lookup(obj, "_meta", "acp-normalize", "subagent")
		if !ok {
			continue
		}
		id, _ := rawjson.LookupString(obj, "toolCallId")
		session, _ := rawjson.LookupString(o.Frame, "params", "sessionId")
		var m map[string]any
		if err := json.Unmarshal(snap, &m); err != nil {
			t.Fatalf("snapshot is not a JSON object: %v: %s", err, snap)
		}
		last[session+"/"+id] = m
	}
	return last
}

// Parents returns, by output line number (1-based, as a string), the
// parentToolCallId each output carries.
func Parents(t testing.TB, outs []Output) map[string]string {
	t.Helper()
	got := map[string]string{}
	for i, o := range outs {
		raw, ok := rawjson.Lookup(Described(o.Frame), "_meta", "acp-normalize", "parentToolCallId")
		if !ok {
			continue
		}
		var p string
		if err := json.Unmarshal(raw, &p); err != nil {
			t.Errorf("output %d: parentToolCallId is not a string: %s", i+1, raw)
		}
		got[strconv.Itoa(i+1)] = p
	}
	return got
}

// RunGolden runs each testdata/golden/*.txtar case through a Router with
// the modules mods returns for the case's name (fresh for each case). A
// case has:
//
//   - input.jsonl: {"from":"client"|"agent","frame":...} lines;
//   - output.jsonl: what each side receives (Format), compared byte for
//     byte (go test -update rewrites it);
//   - snapshots.json (optional, hand-written, never rewritten): the last
//     snapshot of each launch call, by "sessionId/toolCallId";
//   - parents.json (optional, hand-written): the parentToolCallId of each
//     output line that carries one, by line number.
//
// The router gets the settings of the case's comment line "options:"
// (e.g. "options: vendor=codex forward-unknown-vendor-methods"), spelled
// as a capture records them. Every frame a module changed or added toward the client is checked
// against the ACP schema (rule P3). Case names cite the rule they pin.
func RunGolden(t *testing.T, mods func(name string) []rewrite.Module) {
	runGolden(t, func(t *testing.T, c *rewritetest.Case) []rewrite.Module {
		return mods(filepath.Base(c.Path))
	})
}

// Golden is RunGolden for the one module m.
func Golden(t *testing.T, m rewrite.Module) {
	runGolden(t, func(t *testing.T, c *rewritetest.Case) []rewrite.Module {
		return []rewrite.Module{m}
	})
}

func runGolden(t *testing.T, mods func(t *testing.T, c *rewritetest.Case) []rewrite.Module) {
	schema := rewritetest.LoadSchema(t)
	rewritetest.RunGolden(t, filepath.Join("testdata", "golden", "*.txtar"), func(t *testing.T, c *rewritetest.Case) {
		in, ok := c.File("input.jsonl")
		if !ok {
			t.Fatal("no input.jsonl section")
		}
		logs := rewritetest.NewLogRecorder()
		ms := mods(t, c)
		outs := RouteConfig(t, ReadRecords(t, in), proxy.RouterConfig{Modules: ms, Logger: logs.Logger(),
			Settings: Settings(t, ms, caseOptions(c.Comment())...)})
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
		if spec, ok := c.File("parents.json"); ok {
			var want map[string]string
			if err := json.Unmarshal(spec, &want); err != nil {
				t.Fatalf("parents.json: %v", err)
			}
			if got := Parents(t, outs); !reflect.DeepEqual(got, want) {
				t.Errorf("parentToolCallId by output line: got %v, want %v", got, want)
			}
		}
		if recs := logs.Find(slog.LevelError, ""); len(recs) > 0 {
			t.Errorf("a module logged an error: %s", recs[0].Message)
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

// Settings parses settings given as a capture records them
// ("name=value", or a bool option's name) against the shared options and
// those of mods.
func Settings(t testing.TB, mods []rewrite.Module, recorded ...string) rewrite.Settings {
	t.Helper()
	s, unknown := rewrite.ParseRecorded(recorded, rewrite.AllOptions(mods))
	if len(unknown) > 0 {
		t.Fatalf("unknown settings %q", unknown)
	}
	return s
}

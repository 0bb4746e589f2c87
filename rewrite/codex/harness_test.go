package codex_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/proxy"
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/rewrite/codex"
	"github.com/acp-normalize/acp-normalize/rewrite/rawjson"
)

// readRecords reads the input records of a capture (stderr lines are on
// neither protocol stream and are skipped).
func readRecords(t testing.TB, data []byte) []pipe.Record {
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

// output is one frame the router wrote, with the input it came from.
type output struct {
	proxy.Out
	in pipe.Record
}

// route runs records through a Router with mods, as the live proxy would.
func route(t testing.TB, recs []pipe.Record, mods ...rewrite.Module) []output {
	t.Helper()
	r, err := proxy.NewRouter(proxy.RouterConfig{Modules: mods, Version: "0.0.0-test"})
	if err != nil {
		t.Fatalf("NewRouter: %v", err)
	}
	var outs []output
	var buf []proxy.Out
	for _, rec := range recs {
		raw := rec.Frame
		if raw == nil && rec.Text != nil {
			raw = []byte(*rec.Text)
		}
		buf = r.Handle(rec.From, raw, buf[:0])
		for _, o := range buf {
			o.Frame = bytes.Clone(o.Frame)
			outs = append(outs, output{Out: o, in: rec})
		}
	}
	return outs
}

// formatOutputs renders outputs as replay lines (rule R3) with the op.
func formatOutputs(outs []output) []byte {
	var b bytes.Buffer
	for _, o := range outs {
		b.WriteString(`{"to":"` + o.To.String() + `"`)
		if o.Op != "" {
			b.WriteString(`,"op":"` + o.Op + `"`)
		}
		b.WriteString(`,"frame":`)
		b.Write(o.Frame)
		b.WriteString("}\n")
	}
	return b.Bytes()
}

// module is the module under test, configured with settings
// ("name=value" or a bool option's name).
func module(t testing.TB, settings ...string) rewrite.Module {
	t.Helper()
	s, unknown := rewrite.ParseRecorded(settings, rewrite.SharedOptions())
	if len(unknown) > 0 {
		t.Fatalf("unknown settings %q", unknown)
	}
	return rewrite.Configure([]rewrite.Module{codex.Module()}, s)[0]
}

// inert is a module with the codex module's name and triggers that
// changes nothing: what the proxy writes without the module's work (the
// initialize advertisement names the same module).
func inert() rewrite.Module {
	m := codex.Module()
	m.New = func(rewrite.Env) rewrite.Rewriter { return inertRewriter{} }
	return m
}

type inertRewriter struct{}

func (inertRewriter) Rewrite(*rewrite.Frame) (rewrite.Verdict, error) { return rewrite.Verdict{}, nil }

// snapshots returns the last subagent snapshot of each launch call in the
// outputs to the client, by "sessionId/toolCallId".
func snapshots(t testing.TB, outs []output) map[string]map[string]any {
	t.Helper()
	last := map[string]map[string]any{}
	for _, o := range outs {
		if o.To != pipe.Client {
			continue
		}
		upd, _ := rawjson.Lookup(o.Frame, "params", "update")
		snap, ok := rawjson.Lookup(upd, "_meta", "acp-normalize", "subagent")
		if !ok {
			continue
		}
		sid, _ := rawjson.LookupString(o.Frame, "params", "sessionId")
		id, _ := rawjson.LookupString(upd, "toolCallId")
		var m map[string]any
		if err := json.Unmarshal(snap, &m); err != nil {
			t.Fatalf("snapshot is not an object: %v: %s", err, snap)
		}
		last[sid+"/"+id] = m
	}
	return last
}

// withoutAdditions removes what the module may add to a launch-call frame
// (the snapshot and the V3 title) from both frames, for comparing the rest.
func withoutAdditions(t testing.TB, frame []byte) []byte {
	t.Helper()
	out, err := rawjson.Delete(frame, "params", "update", "_meta", "acp-normalize")
	if err != nil {
		t.Fatal(err)
	}
	if m, ok := rawjson.Lookup(out, "params", "update", "_meta"); ok && string(m) == "{}" {
		if out, err = rawjson.Delete(out, "params", "update", "_meta"); err != nil {
			t.Fatal(err)
		}
	}
	if title, ok := rawjson.LookupString(out, "params", "update", "title"); ok && strings.HasPrefix(title, "Subagent: ") {
		if out, err = rawjson.Set(out, []byte(`"spawnAgent"`), "params", "update", "title"); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

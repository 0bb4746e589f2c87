package proxytest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"testing"

	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/proxy"
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/rewrite/meta"
	"github.com/acp-normalize/acp-normalize/rewrite/rawjson"
)

// Version is the version the test routers advertise (rule M).
const Version = "0.0.0-test"

// ReadRecords reads the input records of a capture; stderr lines are on
// neither protocol stream and are left out.
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

// Output is one frame the router wrote, with the input it came from.
type Output struct {
	proxy.Out
	In pipe.Record
}

// Route runs records through a Router with mods, as the live proxy would.
func Route(t testing.TB, recs []pipe.Record, mods ...rewrite.Module) []Output {
	t.Helper()
	r, err := proxy.NewRouter(proxy.RouterConfig{Modules: mods, Version: Version})
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

// Format renders outputs as replay lines (rule R3) with the router's op of
// each changed frame: {"to":"client","op":"replace","frame":...}.
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

// Snapshots returns the last subagent snapshot (rule M) of each launch
// call in the session/update frames to the client, by
// "sessionId/toolCallId".
func Snapshots(t testing.TB, outs []Output) map[string]map[string]any {
	t.Helper()
	last := map[string]map[string]any{}
	for _, o := range outs {
		if o.To != pipe.Client {
			continue
		}
		upd, _ := rawjson.Lookup(o.Frame, "params", "update")
		snap, ok := rawjson.Lookup(upd, "_meta", meta.Key, meta.SubagentMember)
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

// Inert returns a module with m's name and triggers that changes nothing:
// the proxy's output without the module's work (the initialize
// advertisement still names the module).
func Inert(m rewrite.Module) rewrite.Module {
	m.New = func(rewrite.Env) rewrite.Rewriter { return inert{} }
	return m
}

type inert struct{}

func (inert) Rewrite(*rewrite.Frame) (rewrite.Verdict, error) { return rewrite.Verdict{}, nil }

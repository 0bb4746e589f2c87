package claude_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"testing"

	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/proxy"
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/rewrite/claude"
	"github.com/acp-normalize/acp-normalize/rewrite/rawjson"
)

// testVersion is the version the test routers advertise (rule M).
const testVersion = "0.0.0-test"

// readRecords reads the input records of a capture (stderr records are
// skipped: they are not on either protocol stream).
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
		if !rec.IsInput() || rec.Stderr != nil {
			continue
		}
		recs = append(recs, rec)
	}
}

// output is one frame the router wrote, with the input it came from.
type output struct {
	proxy.Out
	in pipe.Record
}

// route runs records through a Router with mods, as the live proxy would.
func route(t testing.TB, recs []pipe.Record, logger *slog.Logger, mods ...rewrite.Module) []output {
	t.Helper()
	r, err := proxy.NewRouter(proxy.RouterConfig{Modules: mods, Version: testVersion, Logger: logger})
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

// formatOutputs renders outputs as replay lines (rule R3) with the op:
// {"to":"client","op":"replace","frame":...}.
func formatOutputs(outs []output) []byte {
	var b bytes.Buffer
	for _, o := range outs {
		b.WriteString(`{"to":"`)
		b.WriteString(o.To.String())
		b.WriteString(`"`)
		if o.Op != "" {
			b.WriteString(`,"op":"`)
			b.WriteString(o.Op)
			b.WriteString(`"`)
		}
		if json.Valid(o.Frame) {
			b.WriteString(`,"frame":`)
			b.Write(o.Frame)
		} else {
			text, _ := json.Marshal(string(o.Frame))
			b.WriteString(`,"text":`)
			b.Write(text)
		}
		b.WriteString("}\n")
	}
	return b.Bytes()
}

// claudeModule is the module under test with the default configuration.
func claudeModule() rewrite.Module { return claude.Module(claude.Config{}) }

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}

// updateObject returns the object an output frame's _meta additions live
// in: params.update of a session/update, params.toolCall of a permission
// request; nil otherwise.
func updateObject(frame []byte) []byte {
	env := pipe.Peek(frame)
	switch {
	case env.MethodIs("session/update"):
		u, _ := rawjson.Lookup(frame, "params", "update")
		return u
	case env.MethodIs("session/request_permission"):
		u, _ := rawjson.Lookup(frame, "params", "toolCall")
		return u
	}
	return nil
}

// snapshots returns the last subagent snapshot seen for each launch call
// in outputs to the client, by "sessionId/toolCallId".
func snapshots(t testing.TB, outs []output) map[string]map[string]any {
	t.Helper()
	last := map[string]map[string]any{}
	for _, o := range outs {
		if o.To != pipe.Client {
			continue
		}
		obj := updateObject(o.Frame)
		snap, ok := rawjson.Lookup(obj, "_meta", "acp-normalize", "subagent")
		if !ok {
			continue
		}
		id, _ := rawjson.LookupString(obj, "toolCallId")
		session, _ := rawjson.LookupString(o.Frame, "params", "sessionId")
		id = session + "/" + id
		var m map[string]any
		if err := json.Unmarshal(snap, &m); err != nil {
			t.Fatalf("snapshot is not a JSON object: %v: %s", err, snap)
		}
		last[id] = m
	}
	return last
}

// metaValue returns _meta["acp-normalize"][key] of obj.
func metaValue(obj []byte, key string) ([]byte, bool) {
	if obj == nil {
		return nil, false
	}
	return rawjson.Lookup(obj, "_meta", "acp-normalize", key)
}

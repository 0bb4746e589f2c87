package routetest

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strconv"
	"testing"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/route"
)

// Version is the version the test routers advertise (rule M).
const Version = "0.0.0-test"

// ReadRecords reads the input records of a capture; stderr records are
// skipped (they are on neither protocol stream).
func ReadRecords(t testing.TB, data []byte) []pipe.Record {
	t.Helper()
	var recs []pipe.Record
	for rec, err := range pipe.NewCaptureReader(bytes.NewReader(data)).Records() {
		if err != nil {
			t.Fatalf("reading capture: %v", err)
		}
		if rec.IsInput() && rec.Stderr == nil {
			recs = append(recs, rec)
		}
	}
	return recs
}

// Output is one frame the router wrote, with the input that caused it.
type Output struct {
	route.Out
	In pipe.Record
}

// Route runs records through a Router with mods, as the live proxy would.
func Route(t testing.TB, recs []pipe.Record, logger *slog.Logger, mods ...rewrite.Module) []Output {
	t.Helper()
	return RouteConfig(t, recs, route.RouterConfig{Modules: mods, Logger: logger})
}

// RouteConfig is Route with a whole router configuration (settings,
// caps); the advertised version is Version when cfg gives none.
func RouteConfig(t testing.TB, recs []pipe.Record, cfg route.RouterConfig) []Output {
	t.Helper()
	if cfg.Version == "" {
		cfg.Version = Version
	}
	r, err := route.NewRouter(cfg)
	if err != nil {
		t.Fatalf("NewRouter: %v", err)
	}
	ins := make([]Input, len(recs))
	for i, rec := range recs {
		ins[i] = Input{Record: rec}
	}
	return Feed(r, ins)
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

package methods_test

import (
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/rewrite/methods"
	"github.com/acp-normalize/acp-normalize/rewrite/rewritetest"
	"github.com/acp-normalize/acp-normalize/route"
	"github.com/acp-normalize/acp-normalize/route/routetest"
)

// TestGolden runs testdata/golden/*.txtar (routetest.RunGolden) through
// the methods module, with the settings of each case's "options:" line
// (--forward-unknown-vendor-methods).
func TestGolden(t *testing.T) {
	routetest.Golden(t, methods.Module())
}

// TestLoggedOnceAtInfo pins V7's logging: the first frame of each unknown
// method is logged at info (a handled quirk, nothing for the user to act
// on: nothing at the default level, warn), later ones are not.
func TestLoggedOnceAtInfo(t *testing.T) {
	logs := rewritetest.NewLogRecorder()
	r, err := route.NewRouter(route.RouterConfig{Modules: []rewrite.Module{methods.Module()}, Version: "0", Logger: logs.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"craft/drainMidTurnQueue","params":{}}`,
		`{"jsonrpc":"2.0","id":2,"method":"craft/drainMidTurnQueue","params":{}}`,
		`{"jsonrpc":"2.0","method":"qwen/notify/session/mode-update","params":{}}`,
	} {
		r.Handle(pipe.Agent, []byte(f), nil)
	}
	var got []string
	for _, rec := range logs.Find(slog.LevelInfo, "") {
		got = append(got, rewritetest.Attr(rec, "method"))
	}
	if n := len(logs.Find(slog.LevelWarn, "")); n != 0 {
		t.Errorf("%d lines at warn, want none", n)
	}
	if want := `["craft/drainMidTurnQueue","qwen/notify/session/mode-update"]`; mustJSON(t, got) != want {
		t.Fatalf("logged %s, want %s", mustJSON(t, got), want)
	}
}

func mustJSON(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// FuzzMethods: whatever an agent sends, no non-standard, non-'_' method
// reaches the client (V7, P3), an unknown request is answered once with
// its own id, and any other frame passes byte for byte (P1).
func FuzzMethods(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"craft/drainMidTurnQueue","params":{}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"rawInput":{"method":"GET"}}}`,
		`{"jsonrpc":"2.0","id":"x","method":"x\/y"}`,
		`{"jsonrpc":"2.0","method":"_a/b"}`,
		`{"method" : "cursor/task","id":[1]}`,
	} {
		f.Add([]byte(s))
	}
	filter := rewrite.NewMethodFilter()
	f.Fuzz(func(t *testing.T, frame []byte) {
		r, err := route.NewRouter(route.RouterConfig{Modules: []rewrite.Module{methods.Module()}, Version: "0"})
		if err != nil {
			t.Fatal(err)
		}
		env := pipe.Peek(frame)
		m := string(env.Method) // decoded
		refused := (env.Kind == pipe.Request || env.Kind == pipe.Notification) && filter.Unknown(m) && json.Valid(frame)
		outs := r.Handle(pipe.Agent, frame, nil)
		for _, o := range outs {
			if o.To == pipe.Client && refused {
				t.Fatalf("unknown method %q reached the client: %s", m, o.Frame)
			}
			if o.To == pipe.Client && string(o.Frame) != string(frame) {
				t.Fatalf("frame changed: %s -> %s", frame, o.Frame)
			}
		}
		if refused && env.Kind == pipe.Request && (len(outs) != 1 || outs[0].To != pipe.Agent) {
			t.Fatalf("unknown request %s: outputs %v, want one answer to the agent", frame, outs)
		}
	})
}

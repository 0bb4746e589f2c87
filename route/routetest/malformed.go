package routetest

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/rewrite/rewritetest"
	"github.com/acp-normalize/acp-normalize/route"
)

// Malformed are the ways a frame whose envelope parses can be broken
// below it (a module spliced its snapshot into each of them):
// the raw JSON of a member value that makes the frame invalid.
var Malformed = []struct{ Name, Value string }{
	{"bad escape", `"a\qb"`},
	{"raw control character", "\"a\tb\""},
	{"bad literal", `tru`},
	{"lone minus", `-`},
	{"short unicode escape", `"\u12"`},
}

// CheckMalformed checks rule P5 for frames that are not valid JSON, or
// are nested deeper than pipe.MaxDepth: recs are routed through a Router
// with mod, then launch (a launch-call frame the module annotates, checked
// first), then launch broken in each way of Malformed and launch with a
// valid value nested 500,000 deep. Each broken frame must go to the
// client byte for byte, with no frame added, and the router must log why
// in words that say what is wrong (P5).
func CheckMalformed(t *testing.T, mod rewrite.Module, recs []pipe.Record, launch []byte) {
	t.Helper()
	route := func(frame []byte) ([]route.Out, *rewritetest.LogRecorder) {
		logs := rewritetest.NewLogRecorder()
		r, err := route.NewRouter(route.RouterConfig{Modules: []rewrite.Module{mod}, Logger: logs.Logger(), Version: Version})
		if err != nil {
			t.Fatal(err)
		}
		for _, rec := range recs {
			r.Handle(rec.From, rec.Frame, nil)
		}
		outs := r.Handle(pipe.Agent, frame, nil)
		for i := range outs {
			outs[i].Frame = bytes.Clone(outs[i].Frame)
		}
		return outs, logs
	}
	if outs, _ := route(launch); len(outs) == 0 || outs[0].Op != pipe.OpReplace {
		t.Fatalf("the launch frame is not rewritten: %v", outs)
	}
	obj := describedPath(launch)
	cases := []struct{ name, value, log string }{}
	for _, m := range Malformed {
		cases = append(cases, struct{ name, value, log string }{m.Name, m.Value, "not valid JSON"})
	}
	const deep = 500_000
	cases = append(cases, struct{ name, value, log string }{"nested 500,000 deep", strings.Repeat("[", deep) + strings.Repeat("]", deep), "nested deeper than"})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// A member spliced in at the end of the described object:
			// the envelope still parses.
			frame, err := rawjson.Set(launch, []byte(`"x"`), append(obj, "broken")...)
			if err != nil {
				t.Fatal(err)
			}
			frame = bytes.Replace(frame, []byte(`"broken":"x"`), []byte(`"broken":`+tc.value), 1)
			outs, logs := route(frame)
			if len(outs) != 1 || outs[0].Op != "" || outs[0].To != pipe.Client || !bytes.Equal(outs[0].Frame, frame) {
				for _, o := range outs {
					t.Logf("out: op %q to %s: %.300s", o.Op, o.To, o.Frame)
				}
				t.Fatalf("P5: the broken frame did not go to the client alone and byte for byte")
			}
			found := false
			for _, rec := range logs.Records() {
				if rec.Level >= slog.LevelWarn && strings.Contains(rec.Message, tc.log) && rewritetest.Attr(rec, "rule") == "P5" {
					found = true
				}
			}
			if !found {
				for _, rec := range logs.Records() {
					t.Logf("log: %s %s", rec.Level, rec.Message)
				}
				t.Errorf("no P5 warning saying %q", tc.log)
			}
		})
	}
}

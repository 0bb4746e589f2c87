package sessions_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite/rewritetest"
	"github.com/acp-normalize/acp-normalize/route"
	"github.com/acp-normalize/acp-normalize/route/routetest"
)

const airNativeInit = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"_meta":{"jetbrains":{"air":{"version":1,"capabilities":["nativeSubagentSessions"]}}}},"clientInfo":{"name":"AIR"}}}`

// TestJ1InitializeAnswer: AIR with native child sessions learns from the
// initialize answer that they are on: result._meta.jetbrains.air names
// nativeSubagentSessions, merged with what the agent said there (its
// version, its list, its other keys kept), never replacing it; a value
// the proxy cannot merge into is left as the agent sent it, with one
// warn line.
func TestJ1InitializeAnswer(t *testing.T) {
	tests := []struct{ name, result, want string }{
		{"nothing said", `{"protocolVersion":1}`, `{"version":1,"capabilities":["nativeSubagentSessions"]}`},
		{"_meta null", `{"protocolVersion":1,"_meta":null}`, `{"version":1,"capabilities":["nativeSubagentSessions"]}`},
		{"other _meta kept", `{"protocolVersion":1,"_meta":{"steering":{"supported":true}}}`, `{"version":1,"capabilities":["nativeSubagentSessions"]}`},
		{"jetbrains without air", `{"protocolVersion":1,"_meta":{"jetbrains":{"x":1}}}`, `{"version":1,"capabilities":["nativeSubagentSessions"]}`},
		{"the agent's list kept", `{"protocolVersion":1,"_meta":{"jetbrains":{"air":{"version":1,"capabilities":["sessionFailure"],"goal":{"version":1}}}}}`, `{"version":1,"capabilities":["sessionFailure","nativeSubagentSessions"],"goal":{"version":1}}`},
		{"an empty list", `{"protocolVersion":1,"_meta":{"jetbrains":{"air":{"version":1,"capabilities":[]}}}}`, `{"version":1,"capabilities":["nativeSubagentSessions"]}`},
		{"already named", `{"protocolVersion":1,"_meta":{"jetbrains":{"air":{"version":1,"capabilities":["nativeSubagentSessions"]}}}}`, `{"version":1,"capabilities":["nativeSubagentSessions"]}`},
		{"air without a list or version", `{"protocolVersion":1,"_meta":{"jetbrains":{"air":{"goal":{}}}}}`, `{"goal":{},"version":1,"capabilities":["nativeSubagentSessions"]}`},
		{"a list that is no array", `{"protocolVersion":1,"_meta":{"jetbrains":{"air":{"version":1,"capabilities":"all"}}}}`, `{"version":1,"capabilities":"all"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logs := rewritetest.NewLogRecorder()
			r := newRouter(t, logs)
			outs := r.Handle(pipe.Client, []byte(airNativeInit), nil)
			if len(outs) != 1 || !bytes.Contains(outs[0].Frame, []byte(`"subagents":{}`)) || !bytes.Contains(outs[0].Frame, []byte(`"jetbrains":{"air"`)) {
				t.Fatalf("the agent is not asked for child sessions with the AIR declaration kept: %v", outs)
			}
			outs = r.Handle(pipe.Agent, []byte(`{"jsonrpc":"2.0","id":0,"result":`+tt.result+`}`), nil)
			if len(outs) != 1 {
				t.Fatalf("%d outputs", len(outs))
			}
			got, _ := rawjson.Lookup(outs[0].Frame, "result", "_meta", "jetbrains", "air")
			if string(got) != tt.want {
				t.Errorf("result._meta.jetbrains.air = %s, want %s\n%s", got, tt.want, outs[0].Frame)
			}
			if other, ok := rawjson.Lookup(outs[0].Frame, "result", "_meta", "steering"); tt.name == "other _meta kept" && (!ok || string(other) != `{"supported":true}`) {
				t.Errorf("the agent's other _meta keys lost: %s", outs[0].Frame)
			}
			warned := len(logs.Find(slog.LevelWarn, "nativeSubagentSessions not advertised")) > 0
			if warned != (tt.name == "a list that is no array") {
				t.Errorf("warned %v", warned)
			}
		})
	}
}

// TestJ1DraftsOnlyForAIR: the draft kinds reach only AIR with native
// child sessions (J1, P3): an opted-in client gets the standard shape,
// AIR without the capability and any other client nothing of them.
func TestJ1DraftsOnlyForAIR(t *testing.T) {
	spawn := `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"subagent_spawned","subagentSessionId":"c1","name":"Lint","task":"Lint it","capabilities":{}}}}`
	for _, tt := range []struct {
		name, init string
		drafts     bool
	}{
		{"AIR native", airNativeInit, true},
		{"AIR without native sessions", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"_meta":{"jetbrains":{"air":{"version":1,"capabilities":[]}}}}}}`, false},
		{"opted in", optedInInit, false},
		{"plain", plainInit, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := newRouter(t, rewritetest.NewLogRecorder())
			handshake(t, r, tt.init, "s1")
			outs := r.Handle(pipe.Agent, []byte(spawn), nil)
			outs = append(outs, r.Handle(pipe.Agent, []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"c1","update":{"sessionUpdate":"subagent_state_update","state":"completed"}}}`), nil)...)
			var drafts int
			for _, o := range outs {
				if bytes.Contains(o.Frame, []byte(`"subagent_spawned"`)) || bytes.Contains(o.Frame, []byte(`"subagent_state_update"`)) {
					drafts++
				}
			}
			if tt.drafts != (drafts == 2) || !tt.drafts && drafts > 0 {
				t.Errorf("%d draft frames reached the client: %v", drafts, outs)
			}
			if tt.drafts {
				// Cursor's end comes on the child without its id: AIR gets it
				// on the parent, naming the child.
				last := outs[len(outs)-1].Frame
				if sid, _ := rawjson.LookupString(last, "params", "sessionId"); sid != "s1" || !bytes.Contains(last, []byte(`"subagentSessionId":"c1"`)) {
					t.Errorf("the end is not on the parent naming the child: %s", last)
				}
			}
		})
	}
}

// TestJ1Golden runs testdata/air/*.txtar (named by the rule they pin)
// through the whole module list, as TestGolden does, with the draft
// kinds, which no ACP schema has, allowed toward the client: their
// envelope is checked (a session, an update naming its kind) and every
// other frame against the schema.
func TestJ1Golden(t *testing.T) {
	schema := rewritetest.LoadSchema(t)
	rewritetest.RunGolden(t, filepath.Join("testdata", "air", "*.txtar"), func(t *testing.T, c *rewritetest.Case) {
		in, ok := c.File("input.jsonl")
		if !ok {
			t.Fatal("no input.jsonl section")
		}
		logs := rewritetest.NewLogRecorder()
		r, err := route.NewRouter(route.RouterConfig{Modules: modules(), Logger: logs.Logger(), Version: routetest.Version})
		if err != nil {
			t.Fatal(err)
		}
		outs := routetest.Feed(r, routetest.ReadInput(t, in))
		for i, o := range outs {
			if !json.Valid(o.Frame) {
				t.Errorf("output %d is no JSON: %s", i+1, o.Frame)
			}
			if o.To != pipe.Client {
				continue
			}
			ff := factsOf(o.Frame)
			switch {
			case ff.tag == "subagent_spawned" || ff.tag == "subagent_state_update":
				if ff.session == "" {
					t.Errorf("output %d: a draft on no session: %s", i+1, o.Frame)
				}
			case strings.HasPrefix(ff.method, "_"):
			default:
				if err := schema.Validate(o.Frame); err != nil {
					t.Errorf("output %d fails the ACP schema: %v\n%s", i+1, err, o.Frame)
				}
			}
		}
		if recs := logs.Find(slog.LevelError, ""); len(recs) > 0 {
			t.Errorf("a module logged an error: %s", recs[0].Message)
		}
		c.Check(t, "output.jsonl", routetest.Format(outs))
	})
}

// TestJ1Marker: AIR without native child sessions gets {"version":1,
// "subagent":true} under _meta.jetbrains.air of every launch call frame,
// merged into what the agent put there (J1).
func TestJ1Marker(t *testing.T) {
	const markerInit = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"_meta":{"jetbrains":{"air":{"version":1,"capabilities":["diffPatch"]}}}}}}`
	tests := []struct{ name, jetbrains, want string }{
		{"nothing there", ``, `{"air":{"version":1,"subagent":true}}`},
		{"jetbrains null", `,"jetbrains":null`, `{"air":{"version":1,"subagent":true}}`},
		{"air null", `,"jetbrains":{"air":null}`, `{"air":{"version":1,"subagent":true}}`},
		{"the agent's air kept", `,"jetbrains":{"air":{"commandTitle":"x"},"other":1}`, `{"air":{"commandTitle":"x","subagent":true,"version":1},"other":1}`},
		{"the agent's marker", `,"jetbrains":{"air":{"version":1,"subagent":true}}`, `{"air":{"version":1,"subagent":true}}`},
		{"jetbrains no object", `,"jetbrains":7`, `7`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRouter(t, rewritetest.NewLogRecorder())
			handshake(t, r, markerInit, "s1")
			call := strings.Replace(launchCall, `"claudeCode":{"toolName":"Agent"}`, `"claudeCode":{"toolName":"Agent"}`+tt.jetbrains, 1)
			outs := r.Handle(pipe.Agent, []byte(call), nil)
			if len(outs) != 1 {
				t.Fatalf("%d outputs", len(outs))
			}
			got, _ := rawjson.Lookup(outs[0].Frame, "params", "update", "_meta", "jetbrains")
			if string(got) != tt.want {
				t.Errorf("_meta.jetbrains = %s, want %s\n%s", got, tt.want, outs[0].Frame)
			}
			if _, ok := rawjson.Lookup(outs[0].Frame, "params", "update", "_meta", "acp-normalize", "subagent"); !ok {
				t.Errorf("the snapshot is lost: %s", outs[0].Frame)
			}
		})
	}
}

// TestJ1NoStandardShapeForAIR: a subagent_update the module does not
// take for a child's (one naming the session it is sent on, or a
// session of the client's) does not reach AIR either: AIR reads the
// draft dialect only (J1).
func TestJ1NoStandardShapeForAIR(t *testing.T) {
	r := newRouter(t, rewritetest.NewLogRecorder())
	handshake(t, r, airNativeInit, "S", "T")
	for _, frame := range []string{
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"S","update":{"sessionUpdate":"subagent_update","sessionId":"S","state":{"state":"running"}}}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"T","update":{"sessionUpdate":"subagent_update","sessionId":"S","state":{"state":"running"}}}}`,
	} {
		for _, o := range r.Handle(pipe.Agent, []byte(frame), nil) {
			if o.To == pipe.Client && bytes.Contains(o.Frame, []byte(`"subagent_update"`)) {
				t.Errorf("a subagent_update reached AIR: %s", o.Frame)
			}
		}
	}
	if outs := r.Handle(pipe.Agent, []byte(chunkOn("S", "kept")), nil); !reached(outs, pipe.Client, "kept") {
		t.Error("a chunk on the client's session was lost")
	}
}

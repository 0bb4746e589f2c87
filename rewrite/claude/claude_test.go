package claude_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/acp-normalize/acp-normalize/route"
	"github.com/acp-normalize/acp-normalize/route/routetest"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/rewrite/claude"
	"github.com/acp-normalize/acp-normalize/rewrite/rewritetest"
	"github.com/acp-normalize/acp-normalize/rewrite/table"
)

func launchFrame(session, id, tag, rawInput string) []byte {
	return fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":%q,"update":{"_meta":{"claudeCode":{"toolName":"Agent"}},"toolCallId":%q,"sessionUpdate":%q,"rawInput":%s}}}`,
		session, id, tag, rawInput)
}

func snapshotOf(t *testing.T, frame []byte) map[string]any {
	t.Helper()
	raw, ok := rawjson.Lookup(frame, "params", "update", "_meta", "acp-normalize", "subagent")
	if !ok {
		t.Fatalf("no snapshot in %s", frame)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestModule checks the module's declaration: valid for the proxy, and
// triggers that select Claude's frames but not plain chunks.
func TestModule(t *testing.T) {
	m := claude.Module()
	if err := rewrite.Validate([]rewrite.Module{m}); err != nil {
		t.Fatal(err)
	}
	if m.Name != claude.Name {
		t.Errorf("name %q", m.Name)
	}
	routetest.CheckTriggers(t, m, []routetest.TriggerCase{
		{Name: "main agent chunk", Frame: `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}}`, Want: false},
		{Name: "chunk quoting claudeCode", Frame: `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"set \"claudeCode\" in _meta"}}}}`, Want: false},
		{Name: "subagent chunk", Frame: `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"},"_meta":{"claudeCode":{"parentToolUseId":"t"}}}}}`, Want: true},
		{Name: "launch call", Frame: string(launchFrame("s", "t", "tool_call", `{}`)), Want: true},
		{Name: "session/close", Frame: `{"jsonrpc":"2.0","id":1,"method":"session/close","params":{"sessionId":"s"}}`, Want: true},
		{Name: "cursor task", Frame: `{"jsonrpc":"2.0","id":0,"method":"cursor/task","params":{"toolCallId":"t"}}`, Want: false},
	})
}

// TestCap pins P6: with a cap of 2, a third launch call drops the oldest
// (logged at debug), whose next frame starts a fresh snapshot, while the
// two newer calls keep theirs.
func TestCap(t *testing.T) {
	logs := rewritetest.NewLogRecorder()
	recs := []pipe.Record{}
	for _, id := range []string{"t1", "t2", "t3"} {
		recs = append(recs, pipe.Record{From: pipe.Agent, Frame: launchFrame("s", id, "tool_call", `{"description":"d-`+id+`"}`)})
	}
	for _, id := range []string{"t3", "t2", "t1"} {
		recs = append(recs, pipe.Record{From: pipe.Agent, Frame: launchFrame("s", id, "tool_call_update", `{"prompt":"p"}`)})
	}
	outs := routetest.RouteConfig(t, recs, route.RouterConfig{Modules: []rewrite.Module{claude.Module()}, Logger: slog.New(logs), MaxEntries: 2})
	if len(outs) != 6 {
		t.Fatalf("%d outputs", len(outs))
	}
	tests := []struct {
		name string
		out  int
		desc any
	}{
		{"P6_newest_kept", 3, "d-t3"},
		{"P6_newer_kept", 4, "d-t2"},
		{"P6_oldest_dropped", 5, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			snap := snapshotOf(t, outs[tc.out].Frame)
			if snap["description"] != tc.desc {
				t.Errorf("description %v, want %v", snap["description"], tc.desc)
			}
			if snap["prompt"] != "p" {
				t.Errorf("prompt %v", snap["prompt"])
			}
		})
	}
	// t1 is dropped for t3; t1 back as a new call drops t2, the oldest then.
	if n := logs.Count(slog.LevelDebug, "cap reached", "toolCallId", "t1"); n != 1 {
		t.Errorf("%d debug logs of t1 dropped, want 1", n)
	}
	if n := logs.Count(slog.LevelDebug, "cap reached", "rule", "P6"); n != 2 {
		t.Errorf("%d debug logs of a dropped call, want 2", n)
	}
}

// TestCapDefault pins the default cap of 1024 (P6): the first of 1025
// calls is forgotten, the second is not.
func TestCapDefault(t *testing.T) {
	var recs []pipe.Record
	for i := range table.DefaultEntries + 1 {
		recs = append(recs, pipe.Record{From: pipe.Agent, Frame: launchFrame("s", fmt.Sprint("t", i), "tool_call", `{"description":"d"}`)})
	}
	recs = append(recs,
		pipe.Record{From: pipe.Agent, Frame: launchFrame("s", "t1", "tool_call_update", `{}`)},
		pipe.Record{From: pipe.Agent, Frame: launchFrame("s", "t0", "tool_call_update", `{}`)},
	)
	outs := routetest.Route(t, recs, nil, claude.Module())
	if d := snapshotOf(t, outs[len(outs)-2].Frame)["description"]; d != "d" {
		t.Errorf("call 1 of 1025 lost its state: description %v", d)
	}
	if d := snapshotOf(t, outs[len(outs)-1].Frame)["description"]; d != nil {
		t.Errorf("call 0 of 1025 kept its state: description %v", d)
	}
}

// TestFailOpenLogged pins P5: a frame the module cannot handle is
// forwarded unchanged and the failure is logged with its rule.
func TestFailOpenLogged(t *testing.T) {
	logs := rewritetest.NewLogRecorder()
	frame := []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","_meta":{"claudeCode":{"parentToolUseId":7}}}}}`)
	outs := routetest.Route(t, []pipe.Record{{From: pipe.Agent, Frame: frame}}, slog.New(logs), claude.Module())
	if len(outs) != 1 || !bytes.Equal(outs[0].Frame, frame) || outs[0].Op != "" {
		t.Fatalf("not forwarded unchanged: %+v", outs)
	}
	if n := logs.Count(slog.LevelWarn, "frame forwarded unchanged", "rule", "L4"); n != 1 {
		t.Errorf("%d warn logs naming rule L4, want 1", n)
	}
}

// BenchmarkSubagentChunk measures the cost of the module on the frames it
// claims most often in flat mode: a subagent's chunk, which gets
// parentToolCallId.
func BenchmarkSubagentChunk(b *testing.B) {
	frame := []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"e4e985fb-6247-4e2e-9356-70fcd4544120","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"` +
		strings.Repeat("streamed text ", 20) + `"},"_meta":{"claudeCode":{"parentToolUseId":"toolu_01Fake000004"}},"messageId":"msg_01Fake000008"}}}`)
	rw := claude.Module().New(rewrite.Env{})
	f := rewrite.NewFrame(pipe.Agent, frame, 1)
	b.ReportAllocs()
	b.SetBytes(int64(len(frame)))
	for b.Loop() {
		f.Reset(pipe.Agent, frame, 1)
		v, err := rw.Rewrite(f)
		if err != nil || v.Frame == nil {
			b.Fatalf("not annotated: %v", err)
		}
	}
}

// step is one frame of a launch call in TestLaunchOrders and what its
// snapshot must say; "-" means the field must be absent.
type step struct {
	frame                      string
	status, background, result string
}

// launchStep builds a frame of launch call "t" in session "s": the update's
// members after toolCallId (rawInput, status, content, ...) and an optional
// toolResponse for _meta.claudeCode.
func launchStep(members, toolResponse string) string {
	cc := `{"toolName":"Agent"}`
	if toolResponse != "" {
		cc = `{"toolResponse":` + toolResponse + `,"toolName":"Agent"}`
	}
	return `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"_meta":{"claudeCode":` + cc + `},"toolCallId":"t",` + members + `}}}`
}

// completedWith is the members of an ACP completed frame with text.
func completedWith(text string) string {
	return `"sessionUpdate":"tool_call_update","status":"completed","content":[{"type":"content","content":{"type":"text","text":"` + text + `"}}]`
}

// TestLaunchOrders pins, frame by frame, the status, background and
// resultText of a launch call for each order of the completed frame and
// the toolResponse frame (L3, M) and that nothing shown is taken back
// (P4).
func TestLaunchOrders(t *testing.T) {
	const ack = "Async agent launched successfully."
	asyncTR := `{"status":"async_launched","isAsync":true,"agentId":"a1","outputFile":"/tmp/a1.output"}`
	cases := []struct {
		name  string
		steps []step
	}{
		{"L3_async_completed_first", []step{
			{launchStep(`"sessionUpdate":"tool_call","rawInput":{"description":"d","prompt":"p","run_in_background":true},"status":"pending"`, ""), "pending", "true", "-"},
			{launchStep(completedWith(ack), ""), "launched", "true", "-"},
			{launchStep(`"sessionUpdate":"tool_call_update"`, asyncTR), "launched", "true", "-"},
		}},
		{"L3_async_toolresponse_first", []step{
			{launchStep(`"sessionUpdate":"tool_call","rawInput":{"description":"d","prompt":"p","run_in_background":true},"status":"pending"`, ""), "pending", "true", "-"},
			{launchStep(`"sessionUpdate":"tool_call_update"`, asyncTR), "launched", "true", "-"},
			{launchStep(completedWith(ack), ""), "launched", "true", "-"},
		}},
		{"L3_foreground_completed_first", []step{
			{launchStep(`"sessionUpdate":"tool_call","rawInput":{"description":"d","prompt":"p","run_in_background":false},"status":"pending"`, ""), "pending", "false", "-"},
			{launchStep(completedWith("result"), ""), "completed", "false", "result"},
			{launchStep(`"sessionUpdate":"tool_call_update"`, `{"status":"completed","agentId":"a1"}`), "completed", "false", "result"},
		}},
		{"L3_unknown_completed_first", []step{
			{launchStep(`"sessionUpdate":"tool_call","rawInput":{"description":"d","prompt":"p"},"status":"pending"`, ""), "pending", "-", "-"},
			{launchStep(completedWith("result"), ""), "completed", "-", "-"},
			{launchStep(`"sessionUpdate":"tool_call_update"`, `{"status":"completed","agentId":"a1"}`), "completed", "false", "result"},
		}},
		{"M_isasync_false_without_status", []step{
			{launchStep(`"sessionUpdate":"tool_call","rawInput":{"description":"d","prompt":"p"},"status":"pending"`, ""), "pending", "-", "-"},
			{launchStep(`"sessionUpdate":"tool_call_update"`, `{"isAsync":false,"agentId":"a1"}`), "pending", "false", "-"},
			{launchStep(completedWith("result"), ""), "completed", "false", "result"},
		}},
		{"M_isasync_false_outweighs_run_in_background_true", []step{
			{launchStep(`"sessionUpdate":"tool_call","rawInput":{"description":"d","prompt":"p","run_in_background":true},"status":"pending"`, ""), "pending", "true", "-"},
			{launchStep(`"sessionUpdate":"tool_call_update"`, `{"isAsync":false,"agentId":"a1"}`), "pending", "false", "-"},
			{launchStep(completedWith("result"), ""), "completed", "false", "result"},
		}},
		{"M_background_true_then_sync_completion", []step{
			{launchStep(`"sessionUpdate":"tool_call","rawInput":{"description":"d","prompt":"p","run_in_background":true},"status":"pending"`, ""), "pending", "true", "-"},
			{launchStep(`"sessionUpdate":"tool_call_update"`, `{"status":"completed","agentId":"a1","content":[{"type":"text","text":"report"}]}`), "completed", "false", "report"},
			{launchStep(completedWith("report"), ""), "completed", "false", "report"},
		}},
		{"M_background_true_completed_first_then_sync_completion", []step{
			{launchStep(`"sessionUpdate":"tool_call","rawInput":{"description":"d","prompt":"p","run_in_background":true},"status":"pending"`, ""), "pending", "true", "-"},
			{launchStep(completedWith("report"), ""), "launched", "true", "-"},
			{launchStep(`"sessionUpdate":"tool_call_update"`, `{"status":"completed","agentId":"a1"}`), "completed", "false", "report"},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var recs []pipe.Record
			for _, s := range tc.steps {
				recs = append(recs, pipe.Record{From: pipe.Agent, Frame: []byte(s.frame)})
			}
			outs := routetest.Route(t, recs, nil, claudeModule())
			if len(outs) != len(tc.steps) {
				t.Fatalf("%d outputs for %d frames", len(outs), len(tc.steps))
			}
			for i, s := range tc.steps {
				snap := snapshotOf(t, outs[i].Frame)
				for _, f := range []struct{ key, want string }{
					{"status", s.status}, {"background", s.background}, {"resultText", s.result},
				} {
					v, ok := snap[f.key]
					got := "-"
					if ok {
						got = fmt.Sprint(v)
					}
					if got != f.want {
						t.Errorf("frame %d: %s = %s, want %s", i+1, f.key, got, f.want)
					}
				}
			}
		})
	}
}

// TestNoParent pins L4 for a parentToolUseId that names no parent (null,
// "", absent): the frame passes through unchanged, gets no
// parentToolCallId, and nothing is logged at warn or above (it is not a
// failure, P5).
func TestNoParent(t *testing.T) {
	cases := []struct{ name, cc string }{
		{"null", `{"parentToolUseId":null}`},
		{"empty", `{"parentToolUseId":""}`},
		{"absent", `{"kind":"informational"}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			logs := rewritetest.NewLogRecorder()
			frame := []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"},"_meta":{"claudeCode":` + tc.cc + `}}}}`)
			outs := routetest.Route(t, []pipe.Record{{From: pipe.Agent, Frame: frame}}, slog.New(logs), claudeModule())
			if len(outs) != 1 || !bytes.Equal(outs[0].Frame, frame) || outs[0].Op != "" {
				t.Fatalf("not forwarded unchanged: %+v", outs)
			}
			for _, r := range logs.Records() {
				if r.Level >= slog.LevelWarn {
					t.Errorf("logged at %v: %s", r.Level, r.Message)
				}
			}
		})
	}
}

// TestLargeLaunchCallMemory pins P6's cost of a rewrite for Claude: the enriched
// frame holds the prompt twice (rawInput and the M snapshot); the rewrite
// may allocate at most 4.5 times the frame: that output, the decoded
// prompt and the snapshot (18.6× before the kit: rawInput decoded into a
// map, one frame copy per path level of each splice).
func TestLargeLaunchCallMemory(t *testing.T) {
	prompt := rewritetest.JSONText(rewritetest.LaunchPrompt(rewritetest.LargePromptSize()))
	frame := launchFrame("s", "t1", "tool_call", `{"description":"count","subagent_type":"general","prompt":`+string(prompt)+`}`)
	rewritetest.CheckRewriteCost(t, claudeModule(), nil, frame, 4.5)
}

package cursor_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"fmt"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/rewrite/cursor"
	"github.com/acp-normalize/acp-normalize/rewrite/rewritetest"
	"github.com/acp-normalize/acp-normalize/route"
	"github.com/acp-normalize/acp-normalize/route/routetest"
)

// TestTriggers pins the hot-path promise: message chunks and other
// high-volume frames never reach the module, while every frame a rule
// needs does.
func TestTriggers(t *testing.T) {
	m := cursor.Module()
	if err := rewrite.Validate([]rewrite.Module{m}); err != nil {
		t.Fatal(err)
	}
	skipped := map[string]string{
		"agent chunk":                 `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Looking at the tool_call code and errors"}}}}`,
		"thought chunk":               `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"hmm"}}}}`,
		"user chunk":                  `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"user_message_chunk","content":{"type":"text","text":"hi"}}}}`,
		"commands":                    `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"available_commands_update","availableCommands":[]}}}`,
		"fs read":                     `{"jsonrpc":"2.0","id":3,"method":"fs/read_text_file","params":{"sessionId":"s","path":"/a"}}`,
		"fs read result":              `{"jsonrpc":"2.0","id":3,"result":{"content":"package main"}}`,
		"chunk naming a .cursor file": `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"See .cursor/rules/go.mdc and ~/.cursor/mcp.json"}}}}`,
		"chunk quoting tool_call":     `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"the \"tool_call\" and \"tool_call_update\" tags"}}}}`,
		"chunk naming _toolName":      `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"check rawInput._toolName first"}}}}`,
		"chunk quoting _toolName key": `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"{\"_toolName\": \"task\"} is set"}}}}`,
	}
	for name, frame := range skipped {
		if !json.Valid([]byte(frame)) {
			t.Errorf("%s: test frame is not JSON: %s", name, frame)
		}
		if routetest.Triggered(m, []byte(frame)) {
			t.Errorf("%s reaches the module: %s", name, frame)
		}
	}
	claimed := map[string]string{
		"cursor/task":      `{"jsonrpc":"2.0","id":0,"method":"cursor/task","params":{}}`,
		"_cursor/task":     `{"jsonrpc":"2.0","id":0,"method":"_cursor/task","params":{}}`,
		"tool_call":        `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"t"}}}`,
		"tool_call_update": `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"t"}}}`,
		"initialize":       `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`,
		"prompt":           `{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s"}}`,
		"prompt response":  `{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}`,
		"prompt error":     `{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"x"}}`,
		"cancel":           `{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}`,
		"close":            `{"jsonrpc":"2.0","id":4,"method":"session/close","params":{"sessionId":"s"}}`,
		"load":             `{"jsonrpc":"2.0","id":4,"method":"session/load","params":{"sessionId":"s"}}`,
		"resume":           `{"jsonrpc":"2.0","id":4,"method":"session/resume","params":{"sessionId":"s"}}`,
		"spaced key":       `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate" : "tool_call_update","toolCallId":"t"}}}`,
		"spaced tool call": `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate": "tool_call","toolCallId":"t"}}}`,
		"toolName only":    `{"jsonrpc":"2.0","method":"session/update","params":{"update":{"rawInput":{"_toolName":"edit"}}}}`,
	}
	for name, frame := range claimed {
		if !routetest.Triggered(m, []byte(frame)) {
			t.Errorf("%s does not reach the module: %s", name, frame)
		}
	}
}

// loggedRouter is a Router with the cursor module whose log lines rec
// keeps.
func loggedRouter(t *testing.T) (*route.Router, *rewritetest.LogRecorder) {
	t.Helper()
	rec := rewritetest.NewLogRecorder()
	r, err := route.NewRouter(route.RouterConfig{Modules: []rewrite.Module{cursor.Module()}, Logger: rec.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	return r, rec
}

// TestUnknownMethodLoggedOnce pins C13's logging: the first request or
// notification of each unknown method is logged at info (handled, nothing
// for the user to do, so nothing at the default level), later ones not.
func TestUnknownMethodLoggedOnce(t *testing.T) {
	r, rec := loggedRouter(t)
	for _, f := range []string{
		`{"jsonrpc":"2.0","id":0,"method":"cursor/a","params":{}}`,
		`{"jsonrpc":"2.0","id":1,"method":"cursor/a","params":{}}`,
		`{"jsonrpc":"2.0","method":"cursor/a","params":{}}`,
		`{"jsonrpc":"2.0","method":"cursor/b"}`,
		`{"jsonrpc":"2.0","id":2,"method":"_cursor/a"}`,
	} {
		r.Handle(pipe.Agent, []byte(f), nil)
	}
	for _, r := range rec.Records() {
		if r.Level >= slog.LevelWarn {
			t.Errorf("logged at %v: %s", r.Level, r.Message)
		}
	}
	if got := strings.Join(rec.Values(slog.LevelInfo, "method"), ","); got != "cursor/a,cursor/b,_cursor/a" {
		t.Errorf("logged %s, want cursor/a,cursor/b,_cursor/a", got)
	}
}

// BenchmarkChunk measures the hot path: a message chunk through a Router
// with the cursor module (it never reaches the module).
func BenchmarkChunk(b *testing.B) {
	r, err := route.NewRouter(route.RouterConfig{Modules: []rewrite.Module{cursor.Module()}})
	if err != nil {
		b.Fatal(err)
	}
	frame := []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"3f9a1c2e-7b4d-4e8a-9c61-5d2f0b8e4a17","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"There are 11 Go files under ./proxy, and 4 of them are tests."}}}}`)
	dst := make([]route.Out, 0, 4)
	b.ReportAllocs()
	for b.Loop() {
		dst = r.Handle(pipe.Agent, frame, dst[:0])
	}
}

// BenchmarkTaskCall measures a subagent tool call frame being enriched.
func BenchmarkTaskCall(b *testing.B) {
	r, err := route.NewRouter(route.RouterConfig{Modules: []rewrite.Module{cursor.Module()}})
	if err != nil {
		b.Fatal(err)
	}
	frame := []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"tool_1","status":"in_progress","rawInput":{"_toolName":"task","description":"count files","prompt":"Count the .go files","subagentType":{"unspecified":{}}}}}}`)
	dst := make([]route.Out, 0, 4)
	b.ReportAllocs()
	for b.Loop() {
		dst = r.Handle(pipe.Agent, frame, dst[:0])
	}
}

// TestMalformedVendorDataWarnsOnce: Cursor data the rules cannot use (a
// format change) shows at the default log level, once per rule and kind,
// although the frame is still answered by the proxy (C1, C8: it must never
// reach the client).
func TestMalformedVendorDataWarnsOnce(t *testing.T) {
	r, rec := loggedRouter(t)
	for _, f := range []string{
		`{"jsonrpc":"2.0","id":0,"method":"cursor/task","params":{"toolCallId":5}}`,
		`{"jsonrpc":"2.0","id":1,"method":"cursor/task","params":{"toolCallId":6}}`,
		`{"jsonrpc":"2.0","id":2,"method":"cursor/update_todos","params":{"toolCallId":"t","todos":"notalist"}}`,
	} {
		outs := r.Handle(pipe.Agent, []byte(f), nil)
		for _, o := range outs {
			if o.To == pipe.Client && bytes.Contains(o.Frame, []byte(`"cursor/`)) {
				t.Fatalf("a cursor request reached the client: %s", o.Frame)
			}
		}
	}
	if got := strings.Join(rec.Values(slog.LevelWarn, "rule"), ","); got != "C1,C8" {
		t.Errorf("warned for rules %s, want C1,C8 (one each)", got)
	}
}

// TestLargeLaunchCallMemory pins P6's cost of a rewrite: rewriting one subagent
// tool call costs a small constant times its size. The enriched frame
// itself holds the prompt three times (rawInput, the C4 content and the M
// snapshot); the whole rewrite may allocate at most 6.5 times the frame:
// that output, the decoded prompt, its content array and the snapshot
// (32.6× before the kit: every Set copied the frame once per path level,
// and encoders grew their buffers by doubling).
func TestLargeLaunchCallMemory(t *testing.T) {
	prompt := rewritetest.JSONText(rewritetest.LaunchPrompt(rewritetest.LargePromptSize()))
	frame := append(append([]byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"t1","title":"Task","kind":"other","status":"pending","rawInput":{"_toolName":"task","description":"count","prompt":`),
		prompt...), `}}}}`...)
	rewritetest.CheckRewriteCost(t, cursor.Module(), nil, frame, 6.5)
}

// TestHeldBytesCapped pins P6 in bytes: held cursor/task
// requests count their prompts, and the oldest is dropped once the
// connection's budget is exceeded, however few entries there are.
func TestHeldBytesCapped(t *testing.T) {
	size := 1 << 20
	if rewritetest.Race {
		size = 64 << 10
	}
	prompt := string(rewritetest.JSONText(rewritetest.LaunchPrompt(size)))
	budget := int64(3*size + 32<<10) // three prompts and change
	r, err := route.NewRouter(route.RouterConfig{Modules: []rewrite.Module{cursor.Module()}, MaxHeldBytes: budget})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		task := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"cursor/task","params":{"toolCallId":"t%d","description":"d%d","prompt":%s}}`, i, i, i, prompt)
		r.Handle(pipe.Agent, []byte(task), nil)
	}
	tests := []struct {
		name string
		id   string
		held bool
	}{
		{"oldest dropped", "t0", false},
		{"newer kept", "t1", true},
		{"newest kept", "t3", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			call := fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":%q,"title":"Task","rawInput":{"_toolName":"task"}}}}`, tt.id)
			outs := r.Handle(pipe.Agent, []byte(call), nil)
			if len(outs) != 1 {
				t.Fatalf("%d outputs", len(outs))
			}
			held := bytes.Contains(outs[0].Frame, []byte(`"description":"d`))
			if held != tt.held {
				t.Fatalf("cursor/task of %s held: %v, want %v", tt.id, held, tt.held)
			}
		})
	}
}

// TestC14PromptAnswerByIDValue: a prompt is out of flight once the agent
// answers it, whatever spelling of its id the answer uses (pipe.IDKey:
// 1E2 is 100), so a later vendor method without sessionId goes to the
// session active last, not to one whose answered prompt is still taken
// for in flight (C14).
func TestC14PromptAnswerByIDValue(t *testing.T) {
	for _, tt := range []struct{ name, id, answerID string }{
		{"the same id", `100`, `100`},
		{"100 answered as 1E2", `100`, `1E2`},
		{"a string id escaped", `"p1"`, `"p\u0031"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r, err := route.NewRouter(route.RouterConfig{Modules: []rewrite.Module{cursor.Module()}})
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range []struct {
				from  pipe.Side
				frame string
			}{
				{pipe.Client, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`},
				{pipe.Agent, `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{}}}`},
				{pipe.Client, `{"jsonrpc":"2.0","id":` + tt.id + `,"method":"session/prompt","params":{"sessionId":"sess-a","prompt":[]}}`},
				{pipe.Agent, `{"jsonrpc":"2.0","id":` + tt.answerID + `,"result":{"stopReason":"end_turn"}}`},
				{pipe.Client, `{"jsonrpc":"2.0","id":7,"method":"session/prompt","params":{"sessionId":"sess-b","prompt":[]}}`},
				{pipe.Agent, `{"jsonrpc":"2.0","id":7,"result":{"stopReason":"end_turn"}}`},
			} {
				r.Handle(f.from, []byte(f.frame), nil)
			}
			outs := r.Handle(pipe.Agent, []byte(`{"jsonrpc":"2.0","id":9,"method":"cursor/update_todos","params":{"todos":[{"id":"1","content":"mine","status":"pending"}]}}`), nil)
			var on []string
			for _, o := range outs {
				if sid, ok := rawjson.LookupString(o.Frame, "params", "sessionId"); ok && o.To == pipe.Client {
					on = append(on, sid)
				}
			}
			if len(on) == 0 || on[0] != "sess-b" {
				t.Errorf("the todos went to %v, want sess-b (active last)", on)
			}
		})
	}
}

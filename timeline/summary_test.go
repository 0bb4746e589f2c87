package timeline

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/proxy"
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/rewrite/rewritetest"
)

func TestSummarize(t *testing.T) {
	tests := []struct {
		name  string
		frame string
		// request, when set, is a request seen earlier going the other way.
		request string
		want    string
	}{
		{"tool_call_with_subagent_snapshot",
			`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"completed","_meta":{"acp-normalize":{"subagent":{"status":"launched"}}}}}}`,
			"", `session/update tool_call_update  t1 completed [subagent launched]`},
		{"claude_child_frame_parent",
			`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"t2","title":"Read","_meta":{"acp-normalize":{"parentToolCallId":"t1"}}}}}`,
			"", `session/update tool_call  t2 "Read" [parent t1]`},
		{"permission_request_options",
			`{"jsonrpc":"2.0","id":4,"method":"session/request_permission","params":{"sessionId":"s","toolCall":{"toolCallId":"t","title":"rm -rf /"},"options":[{"optionId":"a","name":"Allow","kind":"allow_once"},{"optionId":"r","name":"Reject","kind":"reject_once"}]}}`,
			"", `session/request_permission #4  t "rm -rf /" options: "Allow" (allow_once), "Reject" (reject_once)`},
		{"permission_result_named_by_request",
			`{"jsonrpc":"2.0","id":4,"result":{"outcome":{"outcome":"cancelled"}}}`,
			`{"jsonrpc":"2.0","id":4,"method":"session/request_permission","params":{}}`,
			`result #4 session/request_permission  cancelled`},
		{"error_response",
			`{"jsonrpc":"2.0","id":"x","error":{"code":-32601,"message":"Method not found"}}`,
			"", `error #"x"  -32601 "Method not found"`},
		{"cursor_update_todos_underscore",
			`{"jsonrpc":"2.0","id":0,"method":"_cursor/update_todos","params":{"toolCallId":"t","todos":[{"id":"1"},{"id":"2"}],"merge":true}}`,
			"", `_cursor/update_todos #0  2 todos merge=true`},
		{"cursor_outcome_result",
			`{"jsonrpc":"2.0","id":0,"result":{"outcome":{"outcome":"accepted","todos":[]}}}`,
			`{"jsonrpc":"2.0","id":0,"method":"cursor/update_todos","params":{}}`,
			`result #0 cursor/update_todos  outcome accepted`},
		{"subagent_update",
			`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"p","update":{"sessionUpdate":"subagent_update","sessionId":"c","title":"count files","state":{"state":"running"}}}}`,
			"", `session/update subagent_update  child c "count files" running`},
		{"long_text_cut_newlines_shown",
			`{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"prompt":[{"type":"text","text":"` + strings.Repeat(`ab\n`, 40) + `"}]}}`,
			"", `session/prompt #1  "` + strings.Repeat("ab↵", 24) + `…"`},
		{"not_json", `hello`, "", `non-JSON line  "hello"`},
		{"batch", `[{"jsonrpc":"2.0"}]`, "", `batch  19 bytes`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ms := newMethods()
			if tt.request != "" {
				ms.observe(pipe.Agent, []byte(tt.request))
			}
			got := fmtSummary(false, summarize([]byte(tt.frame), pipe.Client, ms))
			if got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestFieldChanges(t *testing.T) {
	tests := []struct {
		name, a, b string
		want       []string
	}{
		{"same_value_other_spelling", `{"a":1.0,"b":[1, 2]}`, `{ "b":[1,2], "a":1.0 }`, nil},
		{"added_single_member_chain_descended", `{"u":{"x":1}}`, `{"u":{"x":1,"_meta":{"acp-normalize":{"subagent":{"status":"running"}}}}}`,
			[]string{`+ u._meta.acp-normalize.subagent.status = "running"`}},
		{"changed_and_removed_in_order", `{"t":"Task","k":"other","gone":true}`, `{"k":"think","t":"Task: x"}`,
			[]string{`~ k: "other" → "think"`, `~ t: "Task" → "Task: x"`, `- gone (was true)`}},
		{"array_elements", `{"c":[{"s":"a"},{"s":"b"}]}`, `{"c":[{"s":"a"},{"s":"c"}]}`, []string{`~ c[1].s: "b" → "c"`}},
		{"array_length", `{"c":[1]}`, `{"c":[1,2]}`, []string{`~ c: [1] → [1,2]`}},
		{"odd_keys_quoted", `{}`, `{"a.b":1}`, []string{`+ "a.b" = 1`}},
		{"long_object_status_first", `{}`, `{"s":{"vendor":"cursor","description":"` + strings.Repeat("d", 40) + `","status":"running"}}`,
			[]string{`+ s = {status:"running", vendor:"cursor", …}`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, fc := range fieldChanges([]byte(tt.a), []byte(tt.b)) {
				got = append(got, fc.render(60))
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// FuzzRenderers replays arbitrary captures through the test module into
// every renderer: none panics, and every JSONL line is valid JSON that
// holds the frame's bytes verbatim.
func FuzzRenderers(f *testing.F) {
	f.Add([]byte(`{"from":"agent","frame":{"jsonrpc":"2.0","id":0,"method":"test/task","params":{"toolCallId":"t","description":"d"}}}` + "\n"))
	f.Add([]byte(`{"from":"agent","frame":{"jsonrpc":"2.0","method":"session/update","params":{"update":{"sessionUpdate":"tool_call","rawInput":{"_toolName":"task"}}}}}` + "\n"))
	f.Add([]byte(`{"from":"agent","text":"{oops"}` + "\n" + `{"from":"client","frame":[1]}` + "\n"))
	f.Add([]byte(`{"from":"agent","frame":{"jsonrpc":"2.0","method":"session/update","params":{"update":{"sessionUpdate":"agent_message_chunk","content":{"text":"\u001b[31m"}}}}}` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var jsonl, pretty, diff, diffJSONL bytes.Buffer
		rs := []Renderer{NewJSONL(&jsonl), NewPretty(&pretty, Options{}), NewDiff(&diff, Options{}), NewDiffJSONL(&diffJSONL)}
		for _, r := range rs {
			if err := r.Begin("fuzz"); err != nil {
				t.Fatal(err)
			}
		}
		err := proxy.Replay(bytes.NewReader(data), proxy.RouterConfig{Modules: []rewrite.Module{rewritetest.Module()}, NonJSON: proxy.ForwardNonJSON}, func(s *proxy.Step) error {
			for _, r := range rs {
				if err := r.Step(s); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rs {
			if err := r.End(); err != nil {
				t.Fatal(err)
			}
		}
		for _, out := range []*bytes.Buffer{&jsonl, &diffJSONL} {
			for _, line := range bytes.Split(bytes.TrimSuffix(out.Bytes(), []byte("\n")), []byte("\n")) {
				if len(line) > 0 && !json.Valid(line) {
					t.Fatalf("invalid JSONL line %q", line)
				}
			}
		}
		if bytes.ContainsAny(pretty.Bytes(), "\x1b\r") || bytes.ContainsAny(diff.Bytes(), "\x1b\r") {
			t.Fatalf("control bytes from a frame reached the terminal output")
		}
	})
}

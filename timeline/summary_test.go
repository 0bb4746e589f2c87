package timeline

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"

	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/rewrite/cursor"
	"github.com/acp-normalize/acp-normalize/rewrite/rewritetest"
	"github.com/acp-normalize/acp-normalize/route"
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
		{"chunk_parent_normalized",
			`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"},"_meta":{"claudeCode":{"parentToolUseId":"v1"},"acp-normalize":{"parentToolCallId":"t1"}}}}}`,
			"", `session/update agent_message_chunk  "hi" [parent t1]`},
		{"chunk_parent_in_a_vendor_meta_object",
			`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"},"_meta":{"claudeCode":{"parentToolUseId":"t1"}}}}}`,
			"", `session/update agent_message_chunk  "hi" [claudeCode parent t1]`},
		{"chunk_parent_in_vendor_meta",
			`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"hm"},"_meta":{"parentToolCallId":"call_1"}}}}`,
			"", `session/update agent_thought_chunk  "hm" [_meta parent call_1]`},
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
			ms := newMethods([]rewrite.Module{cursor.Module()})
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
// every renderer: none panics, every JSONL line is valid JSON that holds
// the frame's bytes verbatim, and the terminal renderers (with and without
// colour) write no C0, C1 or format rune that their palette did not write.
func FuzzRenderers(f *testing.F) {
	f.Add([]byte(`{"from":"agent","frame":{"jsonrpc":"2.0","id":0,"method":"test/task","params":{"toolCallId":"t","description":"d"}}}` + "\n"))
	f.Add([]byte(`{"from":"agent","frame":{"jsonrpc":"2.0","method":"session/update","params":{"update":{"sessionUpdate":"tool_call","rawInput":{"_toolName":"task"}}}}}` + "\n"))
	f.Add([]byte(`{"from":"agent","text":"{oops"}` + "\n" + `{"from":"client","frame":[1]}` + "\n"))
	f.Add([]byte(`{"from":"agent","frame":{"jsonrpc":"2.0","method":"session/update","params":{"update":{"sessionUpdate":"agent_message_chunk","content":{"text":"\u001b[31m"}}}}}` + "\n"))
	f.Add([]byte(`{"from":"agent","frame":{"jsonrpc":"2.0","method":"session/update","params":{"update":{"sessionUpdate":"session_info_update","title":"\u009b2J\u009d52;c;aGk=\u009c\u202e"}}}}` + "\n"))
	f.Add([]byte(`{"from":"agent","frame":{"jsonrpc":"2.0","id":1,"method":"test/task","params":{"toolCallId":"\u001bc","description":"\u200f"}}}` + "\n"))
	f.Add([]byte(`{"from":"agent","stderr":"\u001b]0;pwned\u0007"}` + "\n" + `{"event":"start","agent":["\u009b"]}` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var jsonl, pretty, diff, diffJSONL, prettyColor, diffColor bytes.Buffer
		rs := []Renderer{NewJSONL(&jsonl), NewPretty(&pretty, Options{}), NewDiff(&diff, Options{}), NewDiffJSONL(&diffJSONL),
			NewPretty(&prettyColor, Options{Color: true}), NewDiff(&diffColor, Options{Color: true})}
		for _, r := range rs {
			if err := r.Begin("fuzz"); err != nil {
				t.Fatal(err)
			}
		}
		err := route.Replay(bytes.NewReader(data), route.RouterConfig{Modules: []rewrite.Module{rewritetest.Module()}, NonJSON: route.ForwardNonJSON}, func(s *route.Step) error {
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
		for _, out := range []*bytes.Buffer{&pretty, &diff, &prettyColor, &diffColor} {
			if r, at := firstUnsafeRune(out.String()); at >= 0 {
				t.Fatalf("rune %U from a frame reached the terminal output at byte %d: %q", r, at, out.String())
			}
		}
	})
}

// paletteCodes are the escape sequences the palette itself writes.
var paletteCodes = strings.NewReplacer(ansiReset, "", ansiBold, "", ansiDim, "", ansiRed, "", ansiGreen, "",
	ansiYellow, "", ansiBlue, "", ansiMagenta, "", ansiCyan, "")

// firstUnsafeRune returns the first C0 (but newline), C1 or format rune
// of terminal output once the palette's own codes are removed, and its
// offset, or -1.
func firstUnsafeRune(out string) (rune, int) {
	for i, r := range paletteCodes.Replace(out) {
		if r != '\n' && (unicode.IsControl(r) || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp)) {
			return r, i
		}
	}
	return 0, -1
}

// TestTerminalSafety pins that vendor text in frames, keys and stderr
// lines reaches the pretty and diff output only with its control and
// format runes escaped, in summaries, field paths and the < > frame lines.
func TestTerminalSafety(t *testing.T) {
	tests := []struct {
		name    string
		capture string
		// want must appear in the diff output (which shows the raw
		// frames; each capture changes them) and wantPretty in the pretty.
		want, wantPretty []string
	}{
		{"osc52_in_title",
			`{"from":"agent","frame":{"jsonrpc":"2.0","method":"session/update","params":{"update":{"sessionUpdate":"tool_call","toolCallId":"t","title":"\u001b]52;c;cm0gLXJmIH4=\u0007","rawInput":{"_toolName":"task"}}}}}`,
			[]string{`\u001b]52;c;cm0gLXJmIH4=\u0007`}, []string{`"\u001b]52;c;cm0gLXJmIH4=\u0007"`}},
		{"esc_in_meta_key",
			`{"from":"agent","frame":{"jsonrpc":"2.0","id":1,"method":"test/task","params":{"toolCallId":"t","description":"d","_meta":{"\u001bc":"\u001b[2J"}}}}`,
			[]string{`{"\u001bc":"\u001b[2J"}`}, nil},
		{"rlo_in_chunk_and_c1_csi",
			`{"from":"agent","frame":{"jsonrpc":"2.0","id":1,"method":"test/task","params":{"toolCallId":"\u202etxt.exe","description":"\u009b31m red"}}}`,
			[]string{`\u202etxt.exe`, `\u009b31m red`}, []string{`\u202etxt.exe "Task: \u009b31m red"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, color := range []bool{false, true} {
				var pretty, diff bytes.Buffer
				for _, r := range []Renderer{NewPretty(&pretty, Options{Color: color}), NewDiff(&diff, Options{Color: color})} {
					render(t, r, []rewrite.Module{rewritetest.Module()}, writeCapture(t, tt.capture+"\n"))
				}
				for name, out := range map[string]string{"pretty": pretty.String(), "diff": diff.String()} {
					if r, at := firstUnsafeRune(out); at >= 0 {
						t.Errorf("%s (color %v): rune %U reached the terminal at byte %d:\n%s", name, color, r, at, out)
					}
					want := tt.want
					if name == "pretty" {
						want = tt.wantPretty
					}
					for _, w := range want {
						if !strings.Contains(paletteCodes.Replace(out), w) {
							t.Errorf("%s (color %v): %q not shown escaped:\n%s", name, color, w, out)
						}
					}
				}
			}
		})
	}
}

// TestFieldPathKeysEscaped pins that a key with an ESC in a field change's
// path is shown quoted and escaped, never raw.
func TestFieldPathKeysEscaped(t *testing.T) {
	a := `{"_meta":{}}`
	b := `{"_meta":{"\u001bc":1,"k":{"\u009b":2,"x":"` + strings.Repeat("y", 40) + `"}}}`
	var got []string
	for _, fc := range fieldChanges([]byte(a), []byte(b)) {
		got = append(got, fc.render(30))
	}
	want := []string{`+ _meta."\x1bc" = 1`, `+ _meta.k = {\u009b:2, …}`}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// writeCapture writes a capture to a temporary file and returns its path.
func writeCapture(t *testing.T, capture string) string {
	t.Helper()
	name := filepath.Join(t.TempDir(), "capture.jsonl")
	if err := os.WriteFile(name, []byte(capture), 0o600); err != nil {
		t.Fatal(err)
	}
	return name
}

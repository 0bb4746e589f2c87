package sessions

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestZ4Progress pins the progress lines of rule Z4: one line per tool
// call the subagent runs (title and status, updated in place), one for
// the start of its latest message, at most maxProgressLines, newest
// last; add reports a change only when the lines may differ (a message
// stops changing them once its start is whole: the throttle).
func TestZ4Progress(t *testing.T) {
	long := strings.Repeat("word ", 40)
	tests := []struct {
		name    string
		updates []string
		changed []bool
		want    string
	}{
		{name: "a tool call and its end",
			updates: []string{
				`{"sessionUpdate":"tool_call","toolCallId":"a","title":"Read notes.txt","status":"pending"}`,
				`{"sessionUpdate":"tool_call_update","toolCallId":"a","status":"completed"}`,
				`{"sessionUpdate":"tool_call_update","toolCallId":"a","status":"completed"}`,
			},
			changed: []bool{true, true, false},
			want:    "- Read notes.txt (completed)"},
		{name: "a message after a tool call, in chunks",
			updates: []string{
				`{"sessionUpdate":"tool_call","toolCallId":"a","title":"Read"}`,
				`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"  "}}`,
				`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"The first "}}`,
				`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"line.\nMore"}}`,
			},
			changed: []bool{true, false, true, true},
			want:    "- Read\n> The first line."},
		{name: "a long message changes the line until its start is whole",
			updates: []string{
				`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"` + long + `"}}`,
				`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"more"}}`,
			},
			changed: []bool{true, false},
			want:    "> " + strings.Repeat("word ", 15) + "word…"},
		{name: "newest last, at most five lines",
			updates: []string{
				`{"sessionUpdate":"tool_call","toolCallId":"1","title":"one"}`,
				`{"sessionUpdate":"tool_call","toolCallId":"2","title":"two"}`,
				`{"sessionUpdate":"tool_call","toolCallId":"3","title":"three"}`,
				`{"sessionUpdate":"tool_call","toolCallId":"4","title":"four"}`,
				`{"sessionUpdate":"tool_call","toolCallId":"5","title":"five"}`,
				`{"sessionUpdate":"tool_call","toolCallId":"6"}`,
			},
			changed: []bool{true, true, true, true, true, true},
			want:    "- two\n- three\n- four\n- five\n- tool call"},
		{name: "thoughts and plans are not progress",
			updates: []string{
				`{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"hmm"}}`,
				`{"sessionUpdate":"plan","entries":[]}`,
				`not json`,
			},
			changed: []bool{false, false, false},
			want:    ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var p progress
			for i, u := range tc.updates {
				if got := p.add([]byte(u)); got != tc.changed[i] {
					t.Errorf("update %d: changed = %v, want %v", i, got, tc.changed[i])
				}
			}
			if got := p.render(); got != tc.want {
				t.Errorf("render:\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

// TestZ4WithProgress pins where the progress block goes (Z4): after the
// content the agent gave the call, as valid JSON, marked as the proxy's.
func TestZ4WithProgress(t *testing.T) {
	block := `{"type":"content","content":{"type":"text","text":"- a","_meta":{"acp-normalize":{"progress":true}}}}`
	tests := []struct{ name, vendor, want string }{
		{"no content", "", "[" + block + "]"},
		{"empty", "[ ]", "[ " + block + "]"},
		{"the agent's first", `[{"type":"content","content":{"type":"text","text":"x"}}]`, `[{"type":"content","content":{"type":"text","text":"x"}},` + block + "]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := withProgress([]byte(tc.vendor), "- a")
			if string(got) != tc.want || !json.Valid(got) {
				t.Errorf("got %s\nwant %s", got, tc.want)
			}
		})
	}
}

// TestZ2ContentText: the text of a call's content, for a child thread's
// result when the snapshot has none.
func TestZ2ContentText(t *testing.T) {
	got := contentText([]byte(`[{"type":"content","content":{"type":"text","text":"a"}},{"type":"diff","path":"x"},{"type":"content","content":{"type":"image"}},{"type":"content","content":{"type":"text","text":"b"}}]`))
	if got != "a\nb" {
		t.Errorf("got %q", got)
	}
}

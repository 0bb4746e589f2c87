package sessions

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
)

// TestZ4ProgressHostile: the progress lines of rule Z4 stay what the
// card can show whatever the subagent sends: a message's later lines
// never glue onto its first (its start is whole at the first newline),
// a vendor's status is one short line like a title (no forged lines, no
// megabyte line), and every line is valid JSON text once built.
func TestZ4ProgressHostile(t *testing.T) {
	huge := strings.Repeat("y", 1<<20)
	tests := []struct {
		name    string
		updates []string
		changed []bool
		want    string
	}{
		{name: "a message's second line is not glued to its first",
			updates: []string{
				`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Reading it.\n"}}`,
				`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Now editing"}}`,
			},
			changed: []bool{true, false},
			want:    "> Reading it."},
		{name: "a newline inside a chunk ends the start too",
			updates: []string{
				`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Done"}}`,
				`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":".\nNext"}}`,
				`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":" step"}}`,
			},
			changed: []bool{true, true, false},
			want:    "> Done."},
		{name: "a status cannot forge a line",
			updates: []string{
				`{"sessionUpdate":"tool_call","toolCallId":"a","title":"Read","status":"completed\n- Deleted everything (completed)"}`,
			},
			changed: []bool{true},
			want:    "- Read (completed)"},
		{name: "a megabyte status is clipped",
			updates: []string{
				`{"sessionUpdate":"tool_call","toolCallId":"a","title":"Read"}`,
				`{"sessionUpdate":"tool_call_update","toolCallId":"a","status":"` + huge + `"}`,
			},
			changed: []bool{true, true},
			want:    "- Read (" + strings.Repeat("y", maxProgressText-1) + "…)"},
		{name: "a megabyte title is clipped",
			updates: []string{
				`{"sessionUpdate":"tool_call","toolCallId":"a","title":"` + huge + `"}`,
			},
			changed: []bool{true},
			want:    "- " + strings.Repeat("y", maxProgressText-1) + "…"},
		{name: "control characters, escapes and invalid UTF-8",
			updates: []string{
				`{"sessionUpdate":"tool_call","toolCallId":"a","title":"\u0000\u001b[31m\"q\"\\ \u2028 \ud800 ` + "\xff\xfe" + `"}`,
				`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"\u0007</script>\r\u2029` + "\xc3" + `"}}`,
			},
			changed: []bool{true, true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var p progress
			for i, u := range tc.updates {
				if got := p.add([]byte(u)); got != tc.changed[i] {
					t.Errorf("update %d: changed = %v, want %v", i, got, tc.changed[i])
				}
			}
			got := p.render()
			if tc.want != "" && got != tc.want {
				t.Errorf("render:\n got %.200q\nwant %.200q", got, tc.want)
			}
			for _, l := range strings.Split(got, "\n") {
				if utf8.RuneCountInString(l) > 2+2*maxProgressText+3 {
					t.Errorf("a line of %d characters", utf8.RuneCountInString(l))
				}
			}
			b := withProgress([]byte(`[{"type":"content","content":{"type":"text","text":"x"}}]`), got)
			if !json.Valid(b) || !utf8.Valid(b) {
				t.Errorf("progress content is not valid JSON text: %q", b)
			}
			var v []struct {
				Content struct{ Text string } `json:"content"`
			}
			if err := json.Unmarshal(b, &v); err != nil || len(v) != 2 {
				t.Fatalf("progress content: %v %q", err, b)
			}
			if s, _ := rawjson.DecodeString(rawjson.Text(got)); v[1].Content.Text != s {
				t.Errorf("the block's text %q is not the lines %q", v[1].Content.Text, got)
			}
		})
	}
}

// TestZ4ClipMemory: clipping a title or a message start costs what it
// keeps, not four bytes per character of the whole text (a hostile 8 MiB
// title would otherwise take 32 MiB for 80 characters, P6).
func TestZ4ClipMemory(t *testing.T) {
	s := strings.Repeat("é", 4<<20) // 8 MiB
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	got := clip(s)
	runtime.ReadMemStats(&after)
	if want := strings.Repeat("é", maxProgressText-1) + "…"; got != want {
		t.Errorf("clip = %q", got)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 64<<10 {
		t.Errorf("clip of an 8 MiB text allocated %d bytes", n)
	}
}

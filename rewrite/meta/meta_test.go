package meta

import (
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
)

func TestSet(t *testing.T) {
	tests := []struct {
		name, frame, want string
	}{
		{"no _meta", `{"params":{"update":{"a":1}}}`, `{"params":{"update":{"a":1,"_meta":{"acp-normalize":{"subagent":{"vendor":"v"}}}}}}`},
		{"vendor keys kept", `{"params":{"update":{"_meta":{"claudeCode":{"x":1}}}}}`, `{"params":{"update":{"_meta":{"claudeCode":{"x":1},"acp-normalize":{"subagent":{"vendor":"v"}}}}}}`},
		{"merged into our object", `{"params":{"update":{"_meta":{"acp-normalize":{"parentToolCallId":"p"}}}}}`, `{"params":{"update":{"_meta":{"acp-normalize":{"parentToolCallId":"p","subagent":{"vendor":"v"}}}}}}`},
		{"_meta not an object is replaced", `{"params":{"update":{"_meta":7}}}`, `{"params":{"update":{"_meta":{"acp-normalize":{"subagent":{"vendor":"v"}}}}}}`},
		// The key is the proxy's, whatever the frame holds there.
		{"a forged snapshot is replaced", `{"params":{"update":{"_meta":{"acp-normalize":{"subagent":{"vendor":"x"}}}}}}`, `{"params":{"update":{"_meta":{"acp-normalize":{"subagent":{"vendor":"v"}}}}}}`},
		{"our key not an object is overwritten", `{"params":{"update":{"_meta":{"acp-normalize":7,"k":1}}}}`, `{"params":{"update":{"_meta":{"acp-normalize":{"subagent":{"vendor":"v"}},"k":1}}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := SetSubagent([]byte(tt.frame), &Subagent{Vendor: "v"}, "params", "update")
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Fatalf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
	got, err := SetParent([]byte(`{"params":{"toolCall":{}}}`), []byte(`"T\u0031"`), "params", "toolCall")
	if err != nil || string(got) != `{"params":{"toolCall":{"_meta":{"acp-normalize":{"parentToolCallId":"T\u0031"}}}}}` {
		t.Fatalf("SetParent = %s, %v", got, err)
	}
}

// mirror is Subagent as encoding/json would write it: JSON must match it
// byte for byte.
type mirror struct {
	Vendor         string                     `json:"vendor"`
	ToolName       string                     `json:"toolName,omitempty"`
	Description    *string                    `json:"description,omitempty"`
	Prompt         *string                    `json:"prompt,omitempty"`
	SubagentType   *string                    `json:"subagentType,omitempty"`
	Model          *string                    `json:"model,omitempty"`
	AgentID        *string                    `json:"agentId,omitempty"`
	Background     *bool                      `json:"background,omitempty"`
	Status         Status                     `json:"status,omitempty"`
	DurationMs     json.RawMessage            `json:"durationMs,omitempty"`
	ResultText     *string                    `json:"resultText,omitempty"`
	TotalTokens    json.RawMessage            `json:"totalTokens,omitempty"`
	ToolUseCount   json.RawMessage            `json:"toolUseCount,omitempty"`
	OutputFile     *string                    `json:"outputFile,omitempty"`
	ResolvedModel  *string                    `json:"resolvedModel,omitempty"`
	Effort         *string                    `json:"effort,omitempty"`
	Name           *string                    `json:"name,omitempty"`
	ChildSessionID *string                    `json:"childSessionId,omitempty"`
	Raw            map[string]json.RawMessage `json:"raw,omitempty"`
}

func FuzzSubagentJSON(f *testing.F) {
	f.Add("cursor", "task", "count <files> & \u2028", "prompt\n\"x\"", "1", `{"b": [1, 2]}`, true, 3)
	f.Add("", "", "", "", "", "", false, 0)
	f.Fuzz(func(t *testing.T, vendor, tool, desc, prompt, num, raw string, bg bool, mask int) {
		s := Subagent{Vendor: vendor, ToolName: tool, Status: StatusRunning}
		if mask&1 != 0 {
			s.Description, s.Prompt, s.Name = &desc, &prompt, &tool
			s.Background = &bg
		}
		if json.Valid([]byte(num)) {
			s.DurationMs = json.RawMessage(num)
		}
		if json.Valid([]byte(raw)) && mask&2 != 0 {
			s.Raw = map[string]json.RawMessage{"z": json.RawMessage(raw), "a": json.RawMessage(`1`)}
		}
		want, err := rawjson.Marshal(mirror(s))
		if err != nil {
			t.Skip() // raw values encoding/json refuses
		}
		if got := s.JSON(); string(got) != string(want) {
			t.Fatalf("JSON = %s\nencoding/json: %s", got, want)
		}
	})
}

func TestTitle(t *testing.T) {
	long := "abcdefghij"
	for range 3 {
		long += long
	}
	tests := []struct{ name, desc, prompt, want string }{
		{"description", "count files", "ignored", "Subagent: count files"},
		{"prompt's first line", "", "  first line\nsecond", "Subagent: first line"},
		{"cut at 80", "", long, "Subagent: " + long[:80]},
		{"nothing", " ", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Title(tt.desc, tt.prompt); got != tt.want {
				t.Fatalf("Title = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestStatusOrder(t *testing.T) {
	all := []Status{"", StatusPending, StatusRunning, StatusLaunched, StatusCompleted, StatusFailed, StatusCancelled}
	// rankOf is rule M's order spelled out: none, pending, running,
	// then the final states as one rank.
	rankOf := map[Status]int{"": 0, StatusPending: 1, StatusRunning: 2,
		StatusLaunched: 3, StatusCompleted: 3, StatusFailed: 3, StatusCancelled: 3}
	ended := map[Status]bool{StatusCompleted: true, StatusFailed: true, StatusCancelled: true}
	for _, s := range all {
		if got, want := s.Final(), rankOf[s] == 3; got != want {
			t.Errorf("%q.Final() = %v, want %v", s, got, want)
		}
		if got := s.Ended(); got != ended[s] {
			t.Errorf("%q.Ended() = %v, want %v", s, got, ended[s])
		}
		for _, to := range all {
			if got, want := s.Before(to), rankOf[s] < rankOf[to]; got != want {
				t.Errorf("%q.Before(%q) = %v, want %v", s, to, got, want)
			}
			wantFurther := rankOf[s] < rankOf[to] || s == StatusLaunched && ended[to]
			if got := s.Further(to); got != wantFurther {
				t.Errorf("%q.Further(%q) = %v, want %v", s, to, got, wantFurther)
			}
			sub := s
			if moved := sub.Advance(to); moved != (rankOf[s] < rankOf[to]) || !moved && sub != s || moved && sub != to {
				t.Errorf("Advance from %q to %q: moved %v, status %q", s, to, moved, sub)
			}
			sub = s
			if moved := sub.Follow(to); moved != wantFurther || !moved && sub != s || moved && sub != to {
				t.Errorf("Follow from %q to %q: moved %v, status %q", s, to, moved, sub)
			}
			// Keep: the status the client saw (floor) wins over a lesser
			// one, and an end the client saw stays whatever follows.
			sub = s
			wantKeep := to != "" && to != s && (rankOf[s] < rankOf[to] || s == StatusLaunched && ended[to] || ended[to])
			if moved := sub.Keep(to); moved != wantKeep || moved && sub != to || !moved && sub != s {
				t.Errorf("Keep(%q) of %q: moved %v, status %q", to, s, moved, sub)
			}
		}
	}
}

func TestStatusDetach(t *testing.T) {
	yes, no := true, false
	tests := []struct {
		name string
		s    Status
		bg   *bool
		want Status
	}{
		{"completed in the background", StatusCompleted, &yes, StatusLaunched},
		{"completed in the foreground", StatusCompleted, &no, StatusCompleted},
		{"completed, background not said", StatusCompleted, nil, StatusCompleted},
		{"running in the background", StatusRunning, &yes, StatusRunning},
		{"failed in the background", StatusFailed, &yes, StatusFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.s.Detach(tt.bg); got != tt.want {
				t.Fatalf("Detach = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestFromToolCall(t *testing.T) {
	tests := []struct {
		acp  string
		want Status
	}{
		{"pending", StatusPending},
		{"in_progress", StatusRunning},
		{"completed", StatusCompleted},
		{"failed", StatusFailed},
		{"running", ""}, // not an ACP ToolCallStatus
		{"", ""},
	}
	for _, tt := range tests {
		t.Run(tt.acp, func(t *testing.T) {
			if got := FromToolCall(tt.acp); got != tt.want {
				t.Errorf("FromToolCall(%q) = %q, want %q", tt.acp, got, tt.want)
			}
		})
	}
}

// FuzzParseSubagent: ParseSubagent reads back what JSON writes, byte for
// byte once written again.
func FuzzParseSubagent(f *testing.F) {
	f.Add("cursor", "task", "count <files> & \u2028", "prompt\n\"x\"", "1", `{"b": [1, 2]}`, true, 7)
	f.Add("", "", "", "", "", "", false, 0)
	f.Fuzz(func(t *testing.T, vendor, tool, desc, prompt, num, raw string, bg bool, mask int) {
		for _, str := range []string{vendor, tool, desc, prompt} {
			if !utf8.ValidString(str) {
				t.Skip() // decoded JSON strings always are; JSON writes U+FFFD for the bad bytes
			}
		}
		s := Subagent{Vendor: vendor, ToolName: tool, Status: StatusRunning}
		if mask&1 != 0 {
			s.Description, s.Prompt, s.Name, s.ChildSessionID = &desc, &prompt, &tool, &vendor
			s.Background = &bg
		}
		if mask&4 != 0 && json.Valid([]byte(num)) && rawjson.FirstByte([]byte(num)) != '"' {
			var n json.Number
			if json.Unmarshal([]byte(num), &n) == nil {
				s.DurationMs, s.TotalTokens = json.RawMessage(num), json.RawMessage(num)
			}
		}
		if json.Valid([]byte(raw)) && mask&2 != 0 {
			s.Raw = map[string]json.RawMessage{"z": json.RawMessage(raw), "a": json.RawMessage(`1`)}
		}
		want := s.JSON()
		if !json.Valid(want) {
			t.Skip()
		}
		got, err := ParseSubagent(want)
		if err != nil {
			t.Fatalf("ParseSubagent(%s): %v", want, err)
		}
		if back := got.JSON(); string(back) != string(want) {
			t.Fatalf("round trip:\n got %s\nwant %s", back, want)
		}
	})
}

func TestParseSubagentRejects(t *testing.T) {
	for _, raw := range []string{`7`, `{"vendor":1}`, `{"background":"yes"}`, `{"durationMs":"5"}`, `{"other":1}`, `{"raw":[]}`, `{`} {
		if _, err := ParseSubagent([]byte(raw)); err == nil {
			t.Errorf("ParseSubagent(%s) = nil error", raw)
		}
	}
}

package meta

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
)

// Status is a subagent's state in the snapshot (rule M). It only moves
// forward: pending, running, then one of the final states.
type Status string

// The status vocabulary of rule M.
const (
	StatusPending   Status = "pending"
	StatusRunning   Status = "running"
	StatusLaunched  Status = "launched" // dispatched, now detached (background)
	StatusCompleted Status = "completed"
	StatusFailed    Status = "failed"
	StatusCancelled Status = "cancelled"
)

// FromToolCall maps an ACP ToolCallStatus (pending, in_progress,
// completed, failed) to rule M's vocabulary; "" for any other value. A
// vendor whose launch call's own status is the subagent's uses it (V6).
func FromToolCall(acp string) Status {
	switch acp {
	case "pending":
		return StatusPending
	case "in_progress":
		return StatusRunning
	case "completed":
		return StatusCompleted
	case "failed":
		return StatusFailed
	}
	return ""
}

// rank orders statuses: 0 for none or unknown, 1 pending, 2 running, 3
// for the final states. It is the one order of statuses (P4): every
// module asks the methods below, none compares statuses itself.
func (s Status) rank() int {
	switch s {
	case StatusPending:
		return 1
	case StatusRunning:
		return 2
	case StatusLaunched, StatusCompleted, StatusFailed, StatusCancelled:
		return 3
	}
	return 0
}

// Before reports whether s comes before t: none, pending, running, then
// the final states, which are one rank (P4: a snapshot's status never
// goes to an earlier one).
func (s Status) Before(t Status) bool { return s.rank() < t.rank() }

// Final reports whether s is a final state of the launch call:
// launched, completed, failed or cancelled.
func (s Status) Final() bool { return s.rank() == StatusCompleted.rank() }

// Ended reports whether s is the subagent's end: completed, failed or
// cancelled (launched ends only the launch call; the end may follow, V5).
func (s Status) Ended() bool { return s.Final() && s != StatusLaunched }

// Detached reports whether s is launched: the launch call returned and
// the subagent runs on (V6).
func (s Status) Detached() bool { return s == StatusLaunched }

// Completed reports whether s is completed, the one status whose frame
// carries the subagent's result.
func (s Status) Completed() bool { return s == StatusCompleted }

// Further reports whether t is further along than s: after it, or the
// subagent's end after a detached launch (V5).
func (s Status) Further(t Status) bool { return s.Before(t) || s.Detached() && t.Ended() }

// TakesBack reports whether s, replacing floor, a status the client was
// already sent, would take back what the client saw: floor is further
// along, or floor is the subagent's end and s is another status (P4,
// S8). Nothing takes back an empty floor.
func (s Status) TakesBack(floor Status) bool {
	return floor != "" && floor != s && (s.Further(floor) || floor.Ended())
}

// Advance moves the status to to when to comes after it, and reports
// whether it moved (P4: never back; a final state stays).
func (s *Status) Advance(to Status) bool {
	if !s.Before(to) {
		return false
	}
	*s = to
	return true
}

// Follow moves the status to to when to is further along (Further: as
// Advance, and a detached launch also takes its subagent's end, V5), and
// reports whether it moved.
func (s *Status) Follow(to Status) bool {
	if !s.Further(to) {
		return false
	}
	*s = to
	return true
}

// Keep moves the status back up to floor, a status the client was
// already sent, when it says less (TakesBack: P4, S8), and reports
// whether it changed.
func (s *Status) Keep(floor Status) bool {
	if !s.TakesBack(floor) {
		return false
	}
	*s = floor
	return true
}

// Detach returns launched for completed when background says the
// subagent runs in the background (V6: its launch call completes at once
// while it runs on), else s.
func (s Status) Detach(background *bool) Status {
	if s.Completed() && background != nil && *background {
		return StatusLaunched
	}
	return s
}

// Subagent is the rule-M snapshot of a subagent launch call, every field
// from vendor data only. A nil or empty field is left out; raw values
// (DurationMs, TotalTokens, ToolUseCount, Raw) must be valid JSON.
type Subagent struct {
	Vendor         string
	ToolName       string
	Description    *string
	Prompt         *string
	SubagentType   *string
	Model          *string
	AgentID        *string
	Background     *bool
	Status         Status
	DurationMs     json.RawMessage
	ResultText     *string
	TotalTokens    json.RawMessage
	ToolUseCount   json.RawMessage
	OutputFile     *string
	ResolvedModel  *string
	Effort         *string
	Name           *string
	ChildSessionID *string
	// Raw keeps vendor values that a label flattened, by field name.
	Raw map[string]json.RawMessage
}

// Text returns &s, or nil for "": for vendors whose empty string means
// "not said".
func Text(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// JSON returns the snapshot's JSON, in the contract's field order, as
// encoding/json would write the equivalent struct (no HTML escaping, raw
// values compacted, Raw's keys sorted), built in one buffer sized up front.
func (s *Subagent) JSON() []byte {
	return s.AppendJSON(make([]byte, 0, s.sizeHint()))
}

// AppendJSON appends the snapshot's JSON to dst.
func (s *Subagent) AppendJSON(dst []byte) []byte {
	var background []byte
	if s.Background != nil {
		background = []byte(boolText(*s.Background))
	}
	status := string(s.Status)
	w := objectWriter{dst: append(dst, '{')}
	w.text("vendor", &s.Vendor)
	for _, m := range []member{
		{"toolName", nonEmpty(&s.ToolName), nil}, {"description", s.Description, nil},
		{"prompt", s.Prompt, nil}, {"subagentType", s.SubagentType, nil}, {"model", s.Model, nil},
		{"agentId", s.AgentID, nil}, {"background", nil, background}, {"status", nonEmpty(&status), nil},
		{"durationMs", nil, s.DurationMs}, {"resultText", s.ResultText, nil},
		{"totalTokens", nil, s.TotalTokens}, {"toolUseCount", nil, s.ToolUseCount},
		{"outputFile", s.OutputFile, nil}, {"resolvedModel", s.ResolvedModel, nil},
		{"effort", s.Effort, nil}, {"name", s.Name, nil}, {"childSessionId", s.ChildSessionID, nil},
	} {
		w.text(m.key, m.text)
		w.raw(m.key, m.raw)
	}
	if len(s.Raw) > 0 {
		w.key("raw")
		inner := objectWriter{dst: append(w.dst, '{')}
		keys := make([]string, 0, len(s.Raw))
		for k := range s.Raw {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			inner.raw(k, s.Raw[k])
		}
		w.dst = append(inner.dst, '}')
	}
	return append(w.dst, '}')
}

// member is one snapshot member: a text, or a raw JSON value; neither is
// left out.
type member struct {
	key  string
	text *string
	raw  []byte
}

func nonEmpty(s *string) *string {
	if *s == "" {
		return nil
	}
	return s
}

func (s *Subagent) sizeHint() int {
	n := 256 + len(s.Vendor) + len(s.ToolName) + len(s.Status) +
		len(s.DurationMs) + len(s.TotalTokens) + len(s.ToolUseCount)
	for _, p := range []*string{s.Description, s.Prompt, s.SubagentType, s.Model, s.AgentID,
		s.ResultText, s.OutputFile, s.ResolvedModel, s.Effort, s.Name, s.ChildSessionID} {
		if p != nil {
			n += rawjson.StringLen(*p) + 24
		}
	}
	for k, v := range s.Raw {
		n += len(k) + len(v) + 4
	}
	return n
}

// Bytes returns the bytes the snapshot holds, for a table's byte cap.
func (s *Subagent) Bytes() int64 { return int64(s.sizeHint()) }

func boolText(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// objectWriter appends the members of a JSON object.
type objectWriter struct {
	dst  []byte
	more bool
}

func (w *objectWriter) key(k string) {
	if w.more {
		w.dst = append(w.dst, ',')
	}
	w.more = true
	w.dst = rawjson.AppendString(w.dst, k)
	w.dst = append(w.dst, ':')
}

// text appends a string member; nothing when v is nil.
func (w *objectWriter) text(k string, v *string) {
	if v != nil {
		w.key(k)
		w.dst = rawjson.AppendString(w.dst, *v)
	}
}

// raw appends a raw JSON value, compacted as encoding/json does; nothing
// when v is empty.
func (w *objectWriter) raw(k string, v []byte) {
	if len(v) == 0 {
		return
	}
	w.key(k)
	if bytes.ContainsAny(v, " \t\r\n") {
		buf := bytes.NewBuffer(w.dst)
		if json.Compact(buf, v) == nil {
			w.dst = buf.Bytes()
			return
		}
	}
	w.dst = append(w.dst, v...)
}

// Title returns the V3 title of a launch call, "Subagent: " and the
// description, else the prompt's first line cut at 80 characters; "" when
// both are empty.
func Title(description, prompt string) string {
	if text := TitleText(description, prompt); text != "" {
		return "Subagent: " + text
	}
	return ""
}

// TitleText is the text of Title without its "Subagent: " label: the
// description, else the prompt's first line cut at 80 characters, both
// trimmed; "" when neither has any (a synthesized child session's title,
// rule S4).
func TitleText(description, prompt string) string {
	text := strings.TrimSpace(description)
	if text == "" {
		line, _, _ := strings.Cut(strings.TrimSpace(prompt), "\n")
		text = strings.TrimSpace(line)
		if utf8.RuneCountInString(text) > 80 {
			text = string([]rune(text)[:80])
		}
	}
	return text
}

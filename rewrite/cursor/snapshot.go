package cursor

import (
	"bytes"
	"encoding/json"
	"slices"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
	"github.com/acp-normalize/acp-normalize/rewrite/meta"
)

// snapshot is what the rule-M subagent object is built from, vendor data
// only; "" is "not said".
type snapshot struct {
	toolName        string
	description     string
	prompt          string
	subagentType    string
	rawSubagentType json.RawMessage
	model           string
	agentID         string
	background      *bool
	status          meta.Status
	durationMs      json.RawMessage

	// agentID and durationMs came from cursor/task, which wins over
	// rawOutput whatever the order (docs/cursor.md).
	agentIDFromTask, durationFromTask bool
}

// subagent returns the rule-M snapshot.
func (s *snapshot) subagent() *meta.Subagent {
	m := &meta.Subagent{
		Vendor:       Name,
		ToolName:     s.toolName,
		Description:  meta.Text(s.description),
		Prompt:       meta.Text(s.prompt),
		SubagentType: meta.Text(s.subagentType),
		Model:        meta.Text(s.model),
		AgentID:      meta.Text(s.agentID),
		Background:   s.background,
		Status:       s.status,
		DurationMs:   s.durationMs,
	}
	if s.rawSubagentType != nil {
		m.Raw = map[string]json.RawMessage{"subagentType": s.rawSubagentType}
	}
	return m
}

// bytes returns the bytes s holds (P6).
func (s *snapshot) bytes() int64 {
	return int64(len(s.toolName) + len(s.description) + len(s.prompt) + len(s.subagentType) +
		len(s.rawSubagentType) + len(s.model) + len(s.agentID) + len(s.status) + len(s.durationMs))
}

func (s *snapshot) toolNameOr() string {
	if s.toolName != "" {
		return s.toolName
	}
	return "task"
}

// observeInput fills what is still unknown from a tool call's rawInput.
func (s *snapshot) observeInput(in []byte) {
	if d := strAt(in, "description"); d != "" && s.description == "" {
		s.description = d
	}
	if p := strAt(in, "prompt"); p != "" && s.prompt == "" {
		s.prompt = p
	}
	if m := strAt(in, "model"); m != "" && s.model == "" {
		s.model = m
	}
	if st, ok := rawjson.Lookup(in, "subagentType"); ok && s.rawSubagentType == nil && s.subagentType == "" {
		s.setSubagentType(st)
	}
}

// observeOutput fills from rawOutput what cursor/task did not say (a later
// rawOutput is newer than an earlier one, never than cursor/task).
func (s *snapshot) observeOutput(out []byte) {
	if d, ok := rawjson.Lookup(out, "durationMs"); ok && isNumber(d) && !s.durationFromTask {
		s.durationMs = bytes.Clone(d)
	}
	if a := strAt(out, "agentId"); a != "" && !s.agentIDFromTask {
		s.agentID = a
	}
	if b, ok := rawjson.Lookup(out, "isBackground"); ok {
		switch string(b) {
		case "true":
			t := true
			s.background = &t
		case "false":
			f := false
			s.background = &f
		}
	}
}

// setSubagentType records a vendor subagentType: a string is its own
// label; an object is flattened to a label and kept under raw.
func (s *snapshot) setSubagentType(raw []byte) {
	switch rawjson.FirstByte(raw) {
	case '"':
		if l := str(raw); l != "" {
			s.subagentType, s.rawSubagentType = l, nil
		}
	case '{':
		if !json.Valid(raw) {
			return
		}
		s.rawSubagentType = bytes.Clone(raw)
		if l := subagentLabel(raw); l != "" {
			s.subagentType = l
		}
	}
}

// subagentLabel unwraps every "custom" layer of a Cursor subagentType,
// then takes the custom agent's name or the single remaining key. Keys
// are read as a parser reads them: decoded, the last of duplicates
// counting.
func subagentLabel(raw []byte) string {
	for depth := 0; depth < 16 && rawjson.FirstByte(raw) == '{'; depth++ {
		var keys []string
		var only []byte
		_ = rawjson.Members(raw, func(m rawjson.Member) bool {
			if k, ok := rawjson.UnescapeKey(m.Key); ok {
				if !slices.Contains(keys, k) {
					keys = append(keys, k)
				}
				if len(keys) == 1 {
					only = m.Value
				}
			}
			return true
		})
		if name, ok := rawjson.Lookup(raw, "name"); ok {
			return str(name) // a custom agent, named or not
		}
		if len(keys) != 1 {
			return ""
		}
		if keys[0] == "custom" {
			raw = only
			continue
		}
		return keys[0]
	}
	if rawjson.FirstByte(raw) == '"' {
		return str(raw)
	}
	return ""
}

// taskInfo is what a cursor/task request says.
type taskInfo struct {
	description, prompt, model, agentID string
	subagentType, durationMs            json.RawMessage
}

func parseTask(params []byte) taskInfo {
	var t taskInfo
	t.description = strAt(params, "description")
	t.prompt = strAt(params, "prompt")
	t.model = strAt(params, "model")
	t.agentID = strAt(params, "agentId")
	if v, ok := rawjson.Lookup(params, "subagentType"); ok {
		t.subagentType = bytes.Clone(v)
	}
	if v, ok := rawjson.Lookup(params, "durationMs"); ok && isNumber(v) {
		t.durationMs = bytes.Clone(v)
	}
	return t
}

func (s *snapshot) applyTask(t *taskInfo) {
	if s.toolName == "" {
		s.toolName = "task"
	}
	if t.description != "" {
		s.description = t.description
	}
	if t.prompt != "" {
		s.prompt = t.prompt
	}
	if t.model != "" {
		s.model = t.model
	}
	if t.agentID != "" {
		s.agentID, s.agentIDFromTask = t.agentID, true
	}
	if t.subagentType != nil {
		s.setSubagentType(t.subagentType)
	}
	if t.durationMs != nil {
		s.durationMs, s.durationFromTask = t.durationMs, true
	}
}

func isNumber(v []byte) bool {
	c := rawjson.FirstByte(v)
	return (c == '-' || (c >= '0' && c <= '9')) && json.Valid(v)
}

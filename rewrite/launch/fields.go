package launch

import (
	"bytes"
	"encoding/json"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
	"github.com/acp-normalize/acp-normalize/rewrite/meta"
)

// The setters below fold one vendor value into a snapshot field: a value
// that is absent, empty or of another type leaves the field as it was
// (P4: absent stays absent, and a later frame that omits a field does
// not clear it).

// SetText sets *dst to the non-empty string at path in obj.
func SetText(dst **string, obj []byte, path ...string) {
	if s, ok := rawjson.LookupString(obj, path...); ok && s != "" {
		*dst = meta.Text(s)
	}
}

// SetBool sets *dst to the boolean at path in obj.
func SetBool(dst **bool, obj []byte, path ...string) {
	raw, _ := rawjson.Lookup(obj, path...)
	switch string(raw) {
	case "true", "false":
		b := string(raw) == "true"
		*dst = &b
	}
}

// SetNumber sets *dst to the number at path in obj, as the vendor wrote it.
func SetNumber(dst *json.RawMessage, obj []byte, path ...string) {
	n, _ := rawjson.Lookup(obj, path...)
	if c := rawjson.FirstByte(n); c == '-' || (c >= '0' && c <= '9') {
		*dst = bytes.Clone(n) // the frame's bytes are reused after the call
	}
}

// SetTaskInput folds a launch call's rawInput in the shape of Claude
// Code's subagent tool, which other vendors copied (description, prompt,
// subagent_type, and the vendor's background flag at backgroundKey).
func SetTaskInput(s *meta.Subagent, in []byte, backgroundKey string) {
	SetText(&s.Description, in, "description")
	SetText(&s.Prompt, in, "prompt")
	SetText(&s.SubagentType, in, "subagent_type")
	SetBool(&s.Background, in, backgroundKey)
}

// Bool returns a pointer to b, for the snapshot's Background.
func Bool(b bool) *bool { return &b }

package claude

import (
	"encoding/json"
	"errors"
	"maps"
	"strings"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/rewrite/meta"
)

// call is what the frames of one launch call said so far (L2). A field is
// nil until a frame carried it; a later frame that omits it leaves it.
type call struct {
	key      callKey
	toolName string

	// From rawInput.
	description, prompt, subagentType, model, effort, name *string
	runInBackground                                        *bool

	// acpStatus is the furthest ACP status seen: pending, in_progress,
	// then completed or failed.
	acpStatus string
	// completedText is the text content of the status:"completed" frame.
	completedText *string

	// From _meta.claudeCode.toolResponse.
	trStatus, agentID, agentType, trSubagentType *string
	resolvedModel, outputFile                    *string
	isAsync                                      *bool
	durationMs, totalTokens, toolUseCount        json.RawMessage
	trContentText, handbackText                  *string

	// raw keeps vendor values that no label could hold, by snapshot field.
	raw map[string]json.RawMessage

	// handedBack: the adapter handed back the background subagent's
	// report (L7), peerReport its handbackReportText.
	handedBack bool
	peerReport *string
}

// finished reports whether the vendor has ended the call.
func (c *call) finished() bool { return meta.FromToolCall(c.acpStatus).Final() }

// absorb folds one frame's object (a tool_call/tool_call_update update, or
// a permission request's toolCall) and its _meta.claudeCode into c.
func (c *call) absorb(obj, cc []byte, isPermission bool) error {
	if c.toolName == "" {
		if n, ok := rawjson.LookupString(cc, "toolName"); ok {
			c.toolName = n
		} else if n, ok := rawjson.LookupString(obj, "name"); ok {
			c.toolName = n
		}
	}
	if in, ok := rawjson.Lookup(obj, "rawInput"); ok && rawjson.FirstByte(in) == '{' {
		m, err := members(in)
		if err != nil {
			return rewrite.RuleErrorf("L2", "decoding rawInput: %w", err)
		}
		c.text(&c.description, m, "description", "description")
		c.text(&c.prompt, m, "prompt", "prompt")
		c.text(&c.subagentType, m, "subagent_type", "subagentType")
		c.text(&c.model, m, "model", "model")
		c.text(&c.effort, m, "effort", "effort")
		c.text(&c.name, m, "name", "name")
		c.flag(&c.runInBackground, m, "run_in_background", "background")
	}
	if isPermission {
		// A permission request shows the call; its status is not the
		// call's progress.
		return c.absorbResponse(cc)
	}
	if s, ok := rawjson.LookupString(obj, "status"); ok && meta.FromToolCall(c.acpStatus).Before(meta.FromToolCall(s)) {
		c.acpStatus = s
		if s == "completed" {
			if content, ok := rawjson.Lookup(obj, "content"); ok {
				if t, ok := contentText(content, true); ok {
					c.completedText = &t
				}
			}
		}
	}
	return c.absorbResponse(cc)
}

// absorbResponse folds the toolResponse in, then forgets the result texts
// that a text of higher rank makes unusable for resultText (which never
// goes back to them: a text, once seen, is kept), so that a call holds
// one report, not three (P6).
func (c *call) absorbResponse(cc []byte) error {
	err := c.absorbToolResponse(cc)
	switch {
	case c.handbackText != nil:
		c.trContentText, c.completedText = nil, nil
	case c.trContentText != nil:
		c.completedText = nil
	}
	return err
}

func (c *call) absorbToolResponse(cc []byte) error {
	tr, ok := rawjson.Lookup(cc, "toolResponse")
	if !ok || rawjson.FirstByte(tr) != '{' {
		return nil
	}
	m, err := members(tr)
	if err != nil {
		return rewrite.RuleErrorf("L2", "decoding toolResponse: %w", err)
	}
	c.text(&c.trStatus, m, "status", "toolResponseStatus")
	c.text(&c.agentID, m, "agentId", "agentId")
	c.text(&c.agentType, m, "agentType", "agentType")
	c.text(&c.trSubagentType, m, "subagentType", "toolResponseSubagentType")
	c.text(&c.resolvedModel, m, "resolvedModel", "resolvedModel")
	c.text(&c.outputFile, m, "outputFile", "outputFile")
	c.flag(&c.isAsync, m, "isAsync", "isAsync")
	c.number(&c.durationMs, m, "totalDurationMs", "durationMs")
	c.number(&c.totalTokens, m, "totalTokens", "totalTokens")
	c.number(&c.toolUseCount, m, "totalToolUseCount", "toolUseCount")
	if content, ok := m["content"]; ok {
		if t, ok := contentText(content, false); ok {
			c.trContentText = &t
		}
	}
	if hr, ok := m["handbackReport"]; ok {
		if t, ok := rawjson.LookupString(hr, "text"); ok {
			c.handbackText = &t
		}
	}
	return nil
}

// members returns the members of the JSON object obj by decoded key (the
// last of duplicates, as encoding/json), their values aliasing obj: no
// value is copied, however large (a frame costs a small constant
// times its size).
func members(obj []byte) (map[string]json.RawMessage, error) {
	if !json.Valid(obj) {
		return nil, errors.New("not valid JSON")
	}
	m := map[string]json.RawMessage{}
	err := rawjson.Members(obj, func(mb rawjson.Member) bool {
		if k, ok := rawjson.UnescapeKey(mb.Key); ok {
			m[k] = mb.Value
		}
		return true
	})
	return m, err
}

// text sets *dst from the JSON string m[key]; another non-null value is
// kept in raw under rawKey.
func (c *call) text(dst **string, m map[string]json.RawMessage, key, rawKey string) {
	v, ok := m[key]
	if !ok || string(v) == "null" {
		return
	}
	s, ok := rawjson.DecodeString(v)
	if !ok {
		c.keepRaw(rawKey, v)
		return
	}
	*dst = &s
}

// flag sets *dst from the JSON boolean m[key].
func (c *call) flag(dst **bool, m map[string]json.RawMessage, key, rawKey string) {
	v, ok := m[key]
	if !ok || string(v) == "null" {
		return
	}
	var b bool
	if json.Unmarshal(v, &b) != nil {
		c.keepRaw(rawKey, v)
		return
	}
	*dst = &b
}

// number sets *dst to the JSON number m[key], spelled as the vendor did.
func (c *call) number(dst *json.RawMessage, m map[string]json.RawMessage, key, rawKey string) {
	v, ok := m[key]
	if !ok || string(v) == "null" {
		return
	}
	var n json.Number
	if json.Unmarshal(v, &n) != nil || len(v) == 0 || v[0] == '"' {
		c.keepRaw(rawKey, v)
		return
	}
	*dst = append(json.RawMessage(nil), v...)
}

func (c *call) keepRaw(key string, v json.RawMessage) {
	if c.raw == nil {
		c.raw = make(map[string]json.RawMessage)
	}
	c.raw[key] = append(json.RawMessage(nil), v...)
}

// contentText joins the texts of a content array: ACP tool call content
// ({"type":"content","content":{"type":"text","text":...}}) when wrapped,
// plain content blocks ({"type":"text","text":...}) otherwise.
func contentText(arr []byte, wrapped bool) (string, bool) {
	var parts []string
	_ = rawjson.Elements(arr, func(el []byte) bool {
		block := el
		if wrapped {
			if t, _ := rawjson.LookupString(el, "type"); t != "content" {
				return true
			}
			var ok bool
			if block, ok = rawjson.Lookup(el, "content"); !ok {
				return true
			}
		}
		if t, _ := rawjson.LookupString(block, "type"); t != "text" {
			return true
		}
		if s, ok := rawjson.LookupString(block, "text"); ok {
			parts = append(parts, s)
		}
		return true
	})
	if len(parts) == 0 {
		return "", false
	}
	var b strings.Builder
	for i, p := range parts {
		if i > 0 && !strings.HasSuffix(parts[i-1], "\n") {
			b.WriteByte('\n')
		}
		b.WriteString(p)
	}
	return b.String(), true
}

// asyncLaunched reports whether the toolResponse said the agent was
// launched in the background.
func (c *call) asyncLaunched() bool {
	return (c.trStatus != nil && *c.trStatus == "async_launched") || (c.isAsync != nil && *c.isAsync)
}

// outcomeReported reports whether a toolResponse said how the agent ran:
// a status word or isAsync. The progress toolResponse ({elapsedTimeSeconds,
// subagentType}) says neither.
func (c *call) outcomeReported() bool { return c.trStatus != nil || c.isAsync != nil }

// syncReported reports whether a toolResponse said how the agent ran and
// did not say it was launched in the background.
func (c *call) syncReported() bool { return c.outcomeReported() && !c.asyncLaunched() }

// launchPending reports whether the ACP completed frame came before any
// toolResponse told how the agent ran (the order of older adapters) for a
// call sent with run_in_background:true: that completed frame ends the
// launch, not the agent, so it must not read as the agent's completion
// and then flip to launched when the toolResponse arrives (L3, P4).
func (c *call) launchPending() bool {
	return c.acpStatus == "completed" && c.runInBackground != nil && *c.runInBackground && !c.outcomeReported()
}

// status maps what the vendor said to the rule-M status (L3), whatever the
// order of the result frame and the toolResponse frame.
func (c *call) status() string {
	switch {
	case c.handedBack:
		return "completed" // L7
	case c.asyncLaunched(), c.launchPending():
		return "launched"
	case c.acpStatus == "failed":
		return "failed"
	case c.acpStatus == "completed", c.trStatus != nil && *c.trStatus == "completed":
		return "completed"
	case c.acpStatus == "in_progress":
		return "running"
	case c.acpStatus == "pending":
		return "pending"
	}
	return ""
}

// background is true for a reported async launch; false when the vendor
// said the agent runs in the foreground: isAsync:false, or a toolResponse
// that reports a synchronous completion (status "completed" without an
// async launch), which outweighs a run_in_background:true that the agent
// did not follow (M: background is what the vendor said happened);
// else what run_in_background said, unknown (nil) when it was not sent:
// the SDK runs agents in the background by default, so a missing
// run_in_background says nothing.
func (c *call) background() *bool {
	t, f := true, false
	switch {
	case c.asyncLaunched():
		return &t
	case c.isAsync != nil && !*c.isAsync,
		c.trStatus != nil && *c.trStatus == "completed":
		return &f
	}
	return c.runInBackground
}

// resultText is the subagent's result (L3). When the subagent handed back
// a report, toolResponse.content only says where the report went ("...
// delivered to you as a message ... not repeated here", adapter 0.101.0),
// so the report wins over it. The completed frame of a background launch
// only acknowledges the launch ("Async agent launched successfully"): that
// is no result, so its text is used only once the vendor said the agent
// ran in the foreground: run_in_background:false was sent, or a
// toolResponse reported the outcome without an async launch. Otherwise
// (run_in_background absent or true, toolResponse not yet there: the order
// of older adapters) the text could be a launch acknowledgement and is not
// shown (P4: never invent, never take back).
func (c *call) resultText() *string {
	switch {
	case c.peerReport != nil: // L7
		return c.peerReport
	case c.handbackText != nil:
		return c.handbackText
	case c.trContentText != nil:
		return c.trContentText
	case c.asyncLaunched():
		return nil
	case c.syncReported(), c.runInBackground != nil && !*c.runInBackground:
		return c.completedText
	}
	return nil
}

// snapshot returns the current rule-M snapshot (L3).
func (c *call) snapshot() *meta.Subagent {
	s := &meta.Subagent{
		Vendor:        Name,
		ToolName:      c.toolName,
		Description:   c.description,
		Prompt:        c.prompt,
		SubagentType:  c.subagentType,
		Model:         c.model,
		AgentID:       c.agentID,
		Background:    c.background(),
		Status:        meta.Status(c.status()),
		DurationMs:    c.durationMs,
		ResultText:    personText(c.resultText()), // L8
		TotalTokens:   c.totalTokens,
		ToolUseCount:  c.toolUseCount,
		OutputFile:    c.outputFile,
		ResolvedModel: c.resolvedModel,
		Effort:        c.effort,
		Name:          c.name,
		Raw:           c.raw,
	}
	if s.SubagentType == nil {
		// The label Claude reports back when the input named none.
		s.SubagentType = c.agentType
		if s.SubagentType == nil {
			s.SubagentType = c.trSubagentType
		}
	}
	if c.trStatus != nil && *c.trStatus != "completed" {
		// "async_launched" and any other status is flattened to a label.
		s.Raw = maps.Clone(s.Raw)
		if s.Raw == nil {
			s.Raw = map[string]json.RawMessage{}
		}
		s.Raw["toolResponseStatus"] = rawjson.Text(*c.trStatus)
	}
	return s
}

// bytes returns the bytes the call's state holds (P6).
func (c *call) bytes() int64 {
	n := int64(64)
	for _, p := range []*string{c.description, c.prompt, c.subagentType, c.model, c.effort, c.name,
		c.completedText, c.trStatus, c.agentID, c.agentType, c.trSubagentType, c.resolvedModel,
		c.outputFile, c.trContentText, c.handbackText, c.peerReport} {
		if p != nil {
			n += int64(len(*p))
		}
	}
	n += int64(len(c.durationMs) + len(c.totalTokens) + len(c.toolUseCount))
	for k, v := range c.raw {
		n += int64(len(k) + len(v))
	}
	return n
}

package qwen

import (
	"encoding/json"

	"github.com/acp-normalize/acp-normalize/rewrite/meta"
	"github.com/acp-normalize/acp-normalize/rewrite/rawjson"
)

// absorb folds what a launch-call frame (an update, or a permission
// request's toolCall) says into the snapshot; a field a frame omits keeps
// its value (V2).
func absorb(s *meta.Subagent, obj []byte) error {
	if in, ok := rawjson.Lookup(obj, "rawInput"); ok && rawjson.FirstByte(in) == '{' {
		setText(&s.Description, in, "description")
		setText(&s.Prompt, in, "prompt")
		setText(&s.SubagentType, in, "subagent_type")
		if b, ok := rawjson.Lookup(in, "run_in_background"); ok {
			setBool(&s.Background, b)
		}
	}
	frameStatus := meta.Status("")
	if st, ok := rawjson.LookupString(obj, "status"); ok {
		frameStatus = status(st)
	}
	if outp, ok := rawjson.Lookup(obj, "rawOutput"); ok && rawjson.FirstByte(outp) == '{' {
		if err := absorbOutput(s, outp, &frameStatus); err != nil {
			return err
		}
	}
	if frameStatus == meta.StatusCompleted && s.Background != nil && *s.Background {
		frameStatus = meta.StatusLaunched // V6: completes at once, runs on
	}
	if frameStatus.Rank() > s.Status.Rank() {
		s.Status = frameStatus
	}
	return nil
}

// absorbOutput reads Qwen's rawOutput {type:"task_execution", status,
// executionMode, result, executionSummary}.
func absorbOutput(s *meta.Subagent, out []byte, frameStatus *meta.Status) error {
	if t, _ := rawjson.LookupString(out, "type"); t != "task_execution" {
		return nil
	}
	switch mode, _ := rawjson.LookupString(out, "executionMode"); mode {
	case "background":
		s.Background = boolPtr(true)
	case "foreground":
		s.Background = boolPtr(false)
	}
	if st, ok := rawjson.LookupString(out, "status"); ok {
		if st == "background" {
			*frameStatus = meta.StatusLaunched
			s.Background = boolPtr(true)
		} else if mapped := status(st); mapped != "" {
			*frameStatus = mapped
		}
	}
	setText(&s.SubagentType, out, "subagentName")
	setText(&s.Description, out, "taskDescription")
	setText(&s.Prompt, out, "taskPrompt")
	setText(&s.ResultText, out, "result")
	if sum, ok := rawjson.Lookup(out, "executionSummary"); ok && rawjson.FirstByte(sum) == '{' {
		setNumber(&s.DurationMs, sum, "totalDurationMs")
		setNumber(&s.TotalTokens, sum, "totalTokens")
		setNumber(&s.ToolUseCount, sum, "totalToolCalls")
	}
	return nil
}

// status maps Qwen's ACP and rawOutput states to rule M's (V6); "" for
// one it does not know.
func status(s string) meta.Status {
	switch s {
	case "pending":
		return meta.StatusPending
	case "in_progress", "running":
		return meta.StatusRunning
	case "completed":
		return meta.StatusCompleted
	case "failed", "error":
		return meta.StatusFailed
	case "cancelled", "aborted":
		return meta.StatusCancelled
	}
	return ""
}

// setText sets *dst to the non-empty string at key of obj.
func setText(dst **string, obj []byte, key string) {
	if s, ok := rawjson.LookupString(obj, key); ok && s != "" {
		*dst = meta.Text(s)
	}
}

// setNumber sets *dst to the number at key of obj, as the vendor wrote it.
func setNumber(dst *json.RawMessage, obj []byte, key string) {
	if n, ok := rawjson.Lookup(obj, key); ok {
		if c := rawjson.FirstByte(n); c == '-' || (c >= '0' && c <= '9') {
			*dst = json.RawMessage(n)
		}
	}
}

func setBool(dst **bool, raw []byte) {
	switch string(raw) {
	case "true":
		*dst = boolPtr(true)
	case "false":
		*dst = boolPtr(false)
	}
}

func boolPtr(b bool) *bool { return &b }

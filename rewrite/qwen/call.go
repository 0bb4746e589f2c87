package qwen

import (
	"github.com/acp-normalize/acp-normalize/internal/rawjson"
	"github.com/acp-normalize/acp-normalize/rewrite/launch"
	"github.com/acp-normalize/acp-normalize/rewrite/meta"
)

// absorb folds what a launch-call frame (an update, or a permission
// request's toolCall) says into the snapshot; a field a frame omits keeps
// its value (V2).
func absorb(s *meta.Subagent, obj []byte) {
	if in, ok := rawjson.Lookup(obj, "rawInput"); ok && rawjson.FirstByte(in) == '{' {
		launch.SetTaskInput(s, in, "run_in_background")
	}
	frameStatus := meta.Status("")
	if st, ok := rawjson.LookupString(obj, "status"); ok {
		frameStatus = status(st)
	}
	if outp, ok := rawjson.Lookup(obj, "rawOutput"); ok && rawjson.FirstByte(outp) == '{' {
		absorbOutput(s, outp, &frameStatus)
	}
	s.Status.Advance(frameStatus.Detach(s.Background)) // V6: completes at once, runs on
}

// absorbOutput reads Qwen's rawOutput {type:"task_execution", status,
// executionMode, result, executionSummary}.
func absorbOutput(s *meta.Subagent, out []byte, frameStatus *meta.Status) {
	if t, _ := rawjson.LookupString(out, "type"); t != "task_execution" {
		return
	}
	switch mode, _ := rawjson.LookupString(out, "executionMode"); mode {
	case "background":
		s.Background = launch.Bool(true)
	case "foreground":
		s.Background = launch.Bool(false)
	}
	if st, ok := rawjson.LookupString(out, "status"); ok {
		if st == "background" {
			*frameStatus = meta.StatusLaunched
			s.Background = launch.Bool(true)
		} else if mapped := status(st); mapped != "" {
			*frameStatus = mapped
		}
	}
	launch.SetText(&s.SubagentType, out, "subagentName")
	launch.SetText(&s.Description, out, "taskDescription")
	launch.SetText(&s.Prompt, out, "taskPrompt")
	launch.SetText(&s.ResultText, out, "result")
	if sum, ok := rawjson.Lookup(out, "executionSummary"); ok && rawjson.FirstByte(sum) == '{' {
		launch.SetNumber(&s.DurationMs, sum, "totalDurationMs")
		launch.SetNumber(&s.TotalTokens, sum, "totalTokens")
		launch.SetNumber(&s.ToolUseCount, sum, "totalToolCalls")
	}
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

package opencode

import (
	"strings"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/rewrite/launch"
	"github.com/acp-normalize/acp-normalize/rewrite/meta"
)

// Name is the module's name.
const Name = "opencode"

// toolName is OpenCode's subagent tool, the launch call's first title.
const toolName = "task"

// agentNames are the initialize result's agentInfo.name values of
// OpenCode (rule V1; matched exactly).
func agentNames() []string { return []string{"OpenCode"} }

// Module returns the opencode module.
func Module() rewrite.Module {
	return rewrite.Module{
		Name:   Name,
		Doc:    "OpenCode: subagent snapshot on task launch calls, Subagent titles, <task_result> results (V1-V6)",
		Agents: agentNames(),
		Triggers: []string{
			rewrite.AgentInfoTrigger, // who the agent is (V1)
			`"tool_call"`,            // launch calls (V2)
			`"tool_call_update"`,     // their updates (V2, V3, V5, V6)
			`"session/close"`,        // state dropped (P6)
		},
		New: func(env rewrite.Env) rewrite.Rewriter {
			return &rewriter{id: rewrite.NewIdentity(env, Name, agentNames()...), calls: launch.NewCalls(env)}
		},
	}
}

// The interfaces a rewriter implements, checked by the compiler: only
// Rewriter (no requests of its own to follow, nothing to say at the end).
var _ rewrite.Rewriter = (*rewriter)(nil)

// rewriter is the module's state for one connection.
type rewriter struct {
	id    *rewrite.Identity
	calls *launch.Calls
}

// Rewrite implements rewrite.Rewriter.
func (r *rewriter) Rewrite(f *rewrite.Frame) (rewrite.Verdict, error) {
	if !r.id.Known(f) {
		return rewrite.Verdict{}, nil
	}
	if env := f.Envelope(); f.From == pipe.Agent && env.Kind == pipe.Notification && env.MethodIs("session/update") {
		return r.sessionUpdate(f)
	}
	r.calls.DropClosed(f)
	return rewrite.Verdict{}, nil
}

// sessionUpdate handles the agent's tool calls.
func (r *rewriter) sessionUpdate(f *rewrite.Frame) (rewrite.Verdict, error) {
	var v rewrite.Verdict
	tc, ok := launch.ToolCallOf(f)
	if !ok || tc.Key.ToolCallID == "" {
		return v, nil
	}
	update, key := tc.Update, tc.Key
	c, known := r.calls.Get(key)
	if tc.Starts() {
		// A tool call starts a call: it is a launch only when its first
		// title is the tool's name (V2); an id reused by another tool
		// ends the old entry.
		title, _ := rawjson.LookupString(update, "title")
		switch {
		case title == toolName:
			c = r.calls.Start(key, Name, toolName, toolName)
		case known:
			r.calls.DropKey(key)
			return v, nil
		default:
			return v, nil
		}
	} else if !known {
		return v, nil
	}
	absorb(&c.Snap, update)
	r.calls.Changed(key)
	out, err := c.Annotate(f.Raw, "params", "update")
	if err != nil {
		return v, rewrite.RuleErrorf("V2", "%w", err)
	}
	v.Replace(out)
	return v, nil
}

// absorb folds what a launch-call frame says into the snapshot; a field a
// frame omits keeps its value (V2).
func absorb(s *meta.Subagent, update []byte) {
	if in, ok := rawjson.Lookup(update, "rawInput"); ok && rawjson.FirstByte(in) == '{' {
		launch.SetTaskInput(s, in, "background")
	}
	st, _ := rawjson.LookupString(update, "status")
	frameStatus := meta.FromToolCall(st) // V6
	if md, ok := rawjson.Lookup(update, "rawOutput", "metadata"); ok && rawjson.FirstByte(md) == '{' {
		launch.SetText(&s.ChildSessionID, md, "sessionId")
		launch.SetText(&s.AgentID, md, "jobId")
		launch.SetBool(&s.Background, md, "background")
		if m, ok := rawjson.Lookup(md, "model"); ok && rawjson.FirstByte(m) == '{' {
			provider, _ := rawjson.LookupString(m, "providerID")
			model, _ := rawjson.LookupString(m, "modelID")
			if model != "" {
				if provider != "" {
					model = provider + "/" + model
				}
				s.ResolvedModel = meta.Text(model)
			}
		}
	}
	frameStatus = frameStatus.Detach(s.Background) // V6: returns at once, runs on
	if frameStatus.Completed() {
		if text, ok := taskResult(update); ok {
			s.ResultText = meta.Text(text)
		}
	}
	s.Status.Advance(frameStatus)
}

// taskResult returns the trimmed text inside <task_result>...</task_result>
// of the completion's output (rawOutput.output, else the text content).
func taskResult(update []byte) (string, bool) {
	text, ok := rawjson.LookupString(update, "rawOutput", "output")
	if !ok {
		content, _ := rawjson.Lookup(update, "content")
		_ = rawjson.Elements(content, func(item []byte) bool {
			text, ok = rawjson.LookupString(item, "content", "text")
			return !ok
		})
	}
	if !ok {
		return "", false
	}
	_, rest, found := strings.Cut(text, "<task_result>")
	if !found {
		return "", false
	}
	body, _, found := strings.Cut(rest, "</task_result>")
	if !found {
		return "", false
	}
	body = strings.TrimSpace(body)
	return body, body != ""
}

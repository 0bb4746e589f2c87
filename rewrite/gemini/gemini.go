package gemini

import (
	"log/slog"
	"strings"

	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/rewrite/meta"
	"github.com/acp-normalize/acp-normalize/rewrite/rawjson"
	"github.com/acp-normalize/acp-normalize/rewrite/table"
)

// Name is the module's name on the command line, in --vendor and in the
// snapshot's vendor field.
const Name = "gemini"

// AgentNames are the agentInfo.name values of Gemini CLI (V1).
var AgentNames = []string{"gemini-cli"}

// Launch calls: the tool, the prefix of their toolCallIds and of their
// titles (packages/cli/src/acp: "<tool>__<callId>", the invocation's
// description).
const (
	toolName     = "invoke_agent"
	launchPrefix = toolName + "__"
	titlePrefix  = "Delegating to agent '"
)

// Module returns the gemini module.
func Module() rewrite.Module {
	return rewrite.Module{
		Name: Name,
		Doc:  "Gemini CLI: subagent snapshot on invoke_agent calls (V1-V6)",
		// AgentInfoTrigger hands it the initialize result (V1); every frame of a
		// launch call has a toolCallId opening with "invoke_agent__"
		// (Gemini writes compact JSON); "session/close" drops a session's
		// state (P6). Each holds an unescaped quote inside, so a chat
		// message that mentions the words does not match.
		Triggers: []string{rewrite.AgentInfoTrigger, `"toolCallId":"` + launchPrefix, `"session/close"`},
		New:      func(env rewrite.Env) rewrite.Rewriter { return newRewriter(env) },
	}
}

// callKey identifies a launch call.
type callKey struct {
	session, toolCallID string
}

type rewriter struct {
	// id tells whether the agent is Gemini CLI (V1).
	id    *rewrite.Identity
	calls *table.Table[callKey, *meta.Subagent]
}

func newRewriter(env rewrite.Env) *rewriter {
	return &rewriter{
		id: rewrite.NewIdentity(env, Name, AgentNames...),
		calls: table.New(table.Config[callKey, *meta.Subagent]{
			Name:    "gemini launch calls",
			Budget:  env.Budget,
			Size:    func(k callKey, s *meta.Subagent) int64 { return int64(len(k.session)+len(k.toolCallID)) + s.Bytes() },
			Session: func(k callKey, _ *meta.Subagent) string { return k.session },
			Describe: func(k callKey, _ *meta.Subagent) []any {
				return []any{"sessionId", k.session, "toolCallId", k.toolCallID}
			},
			Logger: logger(env),
		}),
	}
}

func logger(env rewrite.Env) *slog.Logger {
	if env.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return env.Logger
}

// Rewrite implements rewrite.Rewriter.
func (r *rewriter) Rewrite(f *rewrite.Frame) (rewrite.Verdict, error) {
	var v rewrite.Verdict
	if !r.id.Known(f) {
		return v, nil
	}
	switch f.Method() {
	case "session/update":
		return r.update(f)
	case "session/close":
		if sid, ok := rawjson.LookupString(f.Raw, "params", "sessionId"); ok && f.From == pipe.Client {
			r.calls.DropSession(sid)
		}
	}
	return v, nil
}

// update gives a frame of a launch call the snapshot (V2, V6).
func (r *rewriter) update(f *rewrite.Frame) (rewrite.Verdict, error) {
	var v rewrite.Verdict
	upd, ok := f.Lookup("params", "update")
	if !ok {
		return v, nil
	}
	tag, _ := rawjson.LookupString(upd, "sessionUpdate")
	if tag != "tool_call" && tag != "tool_call_update" {
		return v, nil
	}
	id, ok := rawjson.LookupString(upd, "toolCallId")
	if !ok || !strings.HasPrefix(id, launchPrefix) {
		return v, nil
	}
	sid, _ := rawjson.LookupString(f.Raw, "params", "sessionId")
	key := callKey{sid, id}
	s, known := r.calls.Get(key)
	if !known || tag == "tool_call" {
		s = &meta.Subagent{Vendor: Name, ToolName: toolName}
	}
	observe(s, upd)
	out, err := meta.SetSubagent(f.Raw, s, "params", "update")
	if err != nil {
		return v, rewrite.RuleErrorf("V2", "%w", err)
	}
	r.calls.Put(key, s)
	v.Replace(out)
	return v, nil
}

// observe accumulates what a launch-call frame says: the agent's name from
// the title, the status (V6), and the text content of a completion.
func observe(s *meta.Subagent, upd []byte) {
	if title, ok := rawjson.LookupString(upd, "title"); ok {
		if rest, ok := strings.CutPrefix(title, titlePrefix); ok {
			if agent, ok := strings.CutSuffix(rest, "'"); ok && agent != "" {
				s.SubagentType = &agent
			}
		}
	}
	status, _ := rawjson.LookupString(upd, "status")
	switch status {
	case "pending":
		advance(s, meta.StatusPending)
	case "in_progress":
		advance(s, meta.StatusRunning)
	case "completed":
		advance(s, meta.StatusCompleted)
		if text := contentText(upd); text != "" {
			s.ResultText = &text
		}
	case "failed":
		advance(s, meta.StatusFailed)
	}
}

// advance moves the status forward only (P4).
func advance(s *meta.Subagent, to meta.Status) {
	if to.Rank() > s.Status.Rank() {
		s.Status = to
	}
}

// contentText joins the text blocks of a tool call's content.
func contentText(upd []byte) string {
	content, ok := rawjson.Lookup(upd, "content")
	if !ok {
		return ""
	}
	var texts []string
	_ = rawjson.Elements(content, func(e []byte) bool {
		if typ, _ := rawjson.LookupString(e, "type"); typ == "content" {
			if text, ok := rawjson.LookupString(e, "content", "text"); ok && text != "" {
				texts = append(texts, text)
			}
		}
		return true
	})
	return strings.Join(texts, "\n")
}

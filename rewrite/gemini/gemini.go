package gemini

import (
	"strings"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/rewrite/launch"
	"github.com/acp-normalize/acp-normalize/rewrite/meta"
	"github.com/acp-normalize/acp-normalize/rewrite/table"
)

// Name is the module's name on the command line, in --vendor and in the
// snapshot's vendor field.
const Name = "gemini"

// AgentName is the agentInfo.name of Gemini CLI (V1).
const AgentName = "gemini-cli"

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
		Name:   Name,
		Doc:    "Gemini CLI: subagent snapshot on invoke_agent calls (V1-V6)",
		Agents: []string{AgentName},
		// AgentInfoTrigger hands it the initialize result (V1); every frame of a
		// launch call has a toolCallId opening with "invoke_agent__" (in
		// any spelling: the index also finds `"toolCallId": "invoke\u005f...`); "session/close" drops a session's state (P6). Each
		// holds an unescaped quote inside, so a chat message that mentions
		// the words does not match.
		Triggers: []string{rewrite.AgentInfoTrigger, `"toolCallId":"` + launchPrefix, `"session/close"`},
		New:      func(env rewrite.Env) rewrite.Rewriter { return newRewriter(env) },
	}
}

// The interfaces a rewriter implements, checked by the compiler: only
// Rewriter (no requests of its own to follow, nothing to say at the end).
var _ rewrite.Rewriter = (*rewriter)(nil)

type rewriter struct {
	// id tells whether the agent is Gemini CLI (V1).
	id    *rewrite.Identity
	calls *table.Table[launch.Key, *meta.Subagent]
}

func newRewriter(env rewrite.Env) *rewriter {
	return &rewriter{
		id:    rewrite.NewIdentity(env, Name, AgentName),
		calls: launch.NewTable(env, "gemini launch calls", (*meta.Subagent).Bytes),
	}
}

// Rewrite implements rewrite.Rewriter.
func (r *rewriter) Rewrite(f *rewrite.Frame) (rewrite.Verdict, error) {
	return launch.Route(f, r.id, r.calls, r.update)
}

// update gives a frame of a launch call the snapshot (V2, V6).
func (r *rewriter) update(f *rewrite.Frame) (rewrite.Verdict, error) {
	var v rewrite.Verdict
	tc, ok := launch.ToolCallOf(f)
	if !ok || !strings.HasPrefix(tc.Key.ToolCallID, launchPrefix) {
		return v, nil
	}
	upd, key := tc.Update, tc.Key
	s, known := r.calls.Get(key)
	if !known || tc.Starts() {
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
	to := meta.FromToolCall(status)
	s.Status.Advance(to)
	if to.Completed() {
		if text := contentText(upd); text != "" {
			s.ResultText = &text
		}
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

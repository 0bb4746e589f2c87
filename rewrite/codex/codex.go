package codex

import (
	"log/slog"

	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/rewrite/rawjson"
	"github.com/acp-normalize/acp-normalize/rewrite/table"
)

// Name is the module's name on the command line, in --vendor and in the
// snapshot's vendor field.
const Name = "codex"

// AgentNames are the agentInfo.name values of Codex's ACP adapter (V1).
var AgentNames = []string{"@agentclientprotocol/codex-acp"}

// Module returns the codex module.
func Module() rewrite.Module {
	return rewrite.Module{
		Name: Name,
		Doc:  "Codex (codex-acp): subagent snapshot and title on spawnAgent calls, results from wait calls (V1-V6)",
		// AgentInfoTrigger hands it the initialize result (V1); "agentsStates" is
		// in every frame of Codex's multi-agent calls (spawnAgent, wait,
		// ...), which also carry "spawnAgent" as their title when they
		// are launches; "session/close" drops a session's state (P6).
		Triggers: []string{rewrite.AgentInfoTrigger, `"agentsStates"`, `"spawnAgent"`, `"session/close"`},
		New: func(env rewrite.Env) rewrite.Rewriter {
			return newRewriter(env)
		},
	}
}

// callKey identifies a launch call.
type callKey struct {
	session, toolCallID string
}

type rewriter struct {
	// id tells whether the agent is Codex (V1).
	id    *rewrite.Identity
	calls *table.Table[callKey, *launch]
}

func newRewriter(env rewrite.Env) *rewriter {
	log := env.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &rewriter{
		id: rewrite.NewIdentity(env, Name, AgentNames...),
		calls: table.New(table.Config[callKey, *launch]{
			Name:     "codex launch calls",
			Budget:   env.Budget,
			Size:     func(k callKey, l *launch) int64 { return int64(len(k.session)+len(k.toolCallID)) + l.snap.Bytes() },
			Session:  func(k callKey, _ *launch) string { return k.session },
			Describe: func(k callKey, _ *launch) []any { return []any{"sessionId", k.session, "toolCallId", k.toolCallID} },
			Logger:   log,
		}),
	}
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

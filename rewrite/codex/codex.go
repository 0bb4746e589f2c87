package codex

import (
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/rewrite/launch"
)

// Name is the module's name on the command line, in --vendor and in the
// snapshot's vendor field.
const Name = "codex"

// AgentName is the agentInfo.name of Codex's ACP adapter (V1).
const AgentName = "@agentclientprotocol/codex-acp"

// Module returns the codex module.
func Module() rewrite.Module {
	return rewrite.Module{
		Name:   Name,
		Doc:    "Codex (codex-acp): subagent snapshot and title on spawnAgent calls, results from wait calls (V1-V6)",
		Agents: []string{AgentName},
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

// The interfaces a rewriter implements, checked by the compiler: only
// Rewriter (no requests of its own to follow, nothing to say at the end).
var _ rewrite.Rewriter = (*rewriter)(nil)

type rewriter struct {
	// id tells whether the agent is Codex (V1).
	id    *rewrite.Identity
	calls *launch.Calls
}

func newRewriter(env rewrite.Env) *rewriter {
	return &rewriter{
		id:    rewrite.NewIdentity(env, Name, AgentName),
		calls: launch.NewCalls(env),
	}
}

// Rewrite implements rewrite.Rewriter.
func (r *rewriter) Rewrite(f *rewrite.Frame) (rewrite.Verdict, error) {
	return r.calls.Route(f, r.id, r.update)
}

package rewrite

import (
	"slices"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
	"github.com/acp-normalize/acp-normalize/pipe"
)

// AgentInfoTrigger is the trigger that hands a module the initialize
// result, whose agentInfo.name tells which agent the connection runs
// (rule V1).
const AgentInfoTrigger = `"agentInfo":`

// VendorNames lists, in module order, the modules of mods that --vendor
// can name: those that wait for their agent's agentInfo.name (V1).
func VendorNames(mods []Module) []string {
	var names []string
	for _, m := range mods {
		if slices.Contains(m.Triggers, AgentInfoTrigger) {
			names = append(names, m.Name)
		}
	}
	return names
}

// ClosedSession returns the sessionId of a client's session/close: the
// session whose state a module drops (P6).
func ClosedSession(f *Frame) (string, bool) {
	if f.From != pipe.Client || f.Method() != "session/close" {
		return "", false
	}
	return rawjson.LookupString(f.Raw, "params", "sessionId")
}

// Identity tells a vendor module whether the connection's agent is its
// vendor (rule V1): yes from the start with --vendor naming the module,
// else once the initialize result names one of the vendor's agents in
// agentInfo.name (an exact match). Only the answer to the client's
// initialize request counts (Frame.Initialize): an agentInfo in any other
// response (a session/new result, an answer nobody asked for) names
// nothing. Before that, and on every other connection, the
// module must do nothing.
type Identity struct {
	names []string
	known bool
}

// NewIdentity returns the identity of module for one connection; names
// are the agentInfo.name values of the vendor's agents.
func NewIdentity(env Env, module string, names ...string) *Identity {
	return &Identity{names: names, known: env.Settings.String(VendorOption) == module}
}

// Known reports whether the agent is the vendor's, after looking at f:
// the initialize result naming one of the vendor's agents turns it on. A
// module returns the zero Verdict for f when it reports false.
func (id *Identity) Known(f *Frame) bool {
	if !id.known && f.Initialize && f.From == pipe.Agent {
		name, _ := rawjson.LookupString(f.Raw, "result", "agentInfo", "name")
		id.known = slices.Contains(id.names, name)
		return false // the initialize result itself is not the vendor's to change
	}
	return id.known
}

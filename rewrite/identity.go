package rewrite

import (
	"slices"

	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite/rawjson"
)

// AgentInfoTrigger selects the initialize result, which names the agent
// in agentInfo (rule V1). A module that uses Identity lists it among its
// triggers.
const AgentInfoTrigger = `"agentInfo"`

// Identity decides whether a connection's agent is a module's vendor
// (rule V1): the --vendor option when given, else the initialize
// result's agentInfo.name, matched exactly against the module's table of
// names. Until then the module is off.
type Identity struct {
	names  []string
	forced bool // --vendor was given: it decides alone
	active bool
}

// NewIdentity returns the Identity of module for a connection with
// settings s; names are the agentInfo.name values of its agent.
func NewIdentity(s Settings, module string, names ...string) *Identity {
	id := &Identity{names: names}
	if v := s.String(VendorOption); v != "" {
		id.forced, id.active = true, v == module
	}
	return id
}

// Active reports whether the module acts on this connection.
func (id *Identity) Active() bool { return id.active }

// Observe reads the agent's name from f when f is an initialize result
// (a response from the agent with result.agentInfo), and reports whether
// it was one.
func (id *Identity) Observe(f *Frame) bool {
	if f.From != pipe.Agent || f.Kind() != pipe.Response {
		return false
	}
	info, ok := f.Lookup("result", "agentInfo")
	if !ok {
		return false
	}
	if !id.forced {
		name, _ := rawjson.LookupString(info, "name")
		id.active = slices.Contains(id.names, name)
	}
	return true
}

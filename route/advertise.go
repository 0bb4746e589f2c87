package route

import (
	"encoding/json"
	"slices"
	"strconv"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/rewrite/meta"
)

// agentAnswered forgets the client request an agent response answers
// (F6), matching ids by value, and adds the advertisement (rule M) to the
// response to initialize. It returns the frame as it now is, and whether
// it answers the client's initialize (V1: the modules learn the agent's
// name from that frame only). r.mu must be held.
func (r *Router) agentAnswered(env *pipe.Envelope, raw []byte, chk *frameCheck) (cur []byte, replaced, initialize bool) {
	rawID := env.ID
	key := pipe.IDKey(string(rawID))
	delete(r.pending, key)
	if _, ok := r.initIDs[key]; !ok {
		return raw, false, false
	}
	delete(r.initIDs, key)
	if env.Error { // an error carries no capabilities
		return raw, false, true
	}
	if v, ok := rawjson.Lookup(raw, "result", "protocolVersion"); ok && isV2(v) {
		if !r.v2.Swap(true) {
			r.log.Info("the agent speaks ACP protocol v2: every module is off and frames pass unchanged", "protocolVersion", string(v), "rule", "K4")
		}
		return raw, false, true
	}
	if !r.rewritable(chk, pipe.Agent) {
		return raw, false, true
	}
	names := r.names
	var inner *innerAdvert
	if prev, ok := rawjson.Lookup(raw, "result", "agentCapabilities", "_meta", meta.Key); ok {
		names, inner = r.nested(prev)
	}
	advert, err := r.advertisement(names, inner)
	if err != nil {
		r.log.Warn("initialize response left unchanged", "rule", "M", "id", string(rawID), "err", err)
		return raw, false, true
	}
	adv, err := rewrite.Set(raw, advert, "result", "agentCapabilities", "_meta", meta.Key)
	if err != nil {
		r.log.Warn("initialize response left unchanged", "rule", "M", "id", string(rawID), "err", err)
		return raw, false, true
	}
	return adv, true, true
}

// isV2 reports whether a protocolVersion is 2 or later: shapes the v1
// modules must not guess at (K4).
func isV2(v []byte) bool {
	n, err := strconv.ParseUint(string(v), 10, 32)
	return err == nil && n >= 2
}

// asksV2 reports whether initialize params ask for protocol v2 or later.
func asksV2(params []byte) bool {
	v, ok := rawjson.Lookup(params, "protocolVersion")
	return ok && isV2(v)
}

// V2 reports whether the connection turned out to be protocol v2 (K4).
func (r *Router) V2() bool { return r.v2.Load() }

// advertisement returns the initialize result's
// agentCapabilities._meta["acp-normalize"] (rule M): the version, the
// modules, and what the proxy leaves to this client or allows for (P7):
// clientHandles (the vendor methods forwarded to it) and clientTraits,
// each only when there is one. Behind another acp-normalize (inner set),
// those are the inner proxy's for the modules it applies (they are off
// here) and this proxy's for the others; what this proxy was told that
// only the inner one could do is logged at warn.
func (r *Router) advertisement(modules []string, inner *innerAdvert) ([]byte, error) {
	ad := map[string]any{"version": r.cfg.Version, "modules": modules}
	handles, traits := r.client.Handled(), r.client.TraitList()
	if inner != nil {
		handles, traits = r.nestedClient(inner)
	}
	if len(handles) > 0 {
		ad["clientHandles"] = handles
	}
	if len(traits) > 0 {
		ad["clientTraits"] = traits
	}
	return rewrite.Marshal(ad)
}

// innerAdvert is what this router reads of an inner acp-normalize's
// advertisement.
type innerAdvert struct {
	Modules       []string
	ClientHandles []string
	ClientTraits  []rewrite.Trait
}

// UnmarshalJSON reads the modules strictly (they decide what is off
// here) and what is left to the client leniently: a list this version
// cannot read counts as none.
func (a *innerAdvert) UnmarshalJSON(b []byte) error {
	var ad struct {
		Modules       []string        `json:"modules"`
		ClientHandles json.RawMessage `json:"clientHandles"`
		ClientTraits  json.RawMessage `json:"clientTraits"`
	}
	if err := json.Unmarshal(b, &ad); err != nil {
		return err
	}
	a.Modules = ad.Modules
	_ = json.Unmarshal(ad.ClientHandles, &a.ClientHandles)
	_ = json.Unmarshal(ad.ClientTraits, &a.ClientTraits)
	return nil
}

// nestedClient returns the methods left to the client and its traits
// behind an inner acp-normalize (P7): the inner proxy's, then this one's
// that a module still on here acts on. r.mu must be held.
func (r *Router) nestedClient(inner *innerAdvert) ([]string, []rewrite.Trait) {
	handles := slices.Clone(inner.ClientHandles)
	var moot []string
	for _, h := range r.client.Handled() {
		switch {
		case slices.Contains(handles, h):
		case r.decidesHere(h):
			handles = append(handles, h)
		default:
			moot = append(moot, h)
		}
	}
	traits := slices.Clone(inner.ClientTraits)
	var mootTraits []rewrite.Trait
	for _, t := range r.client.TraitList() {
		switch {
		case slices.Contains(traits, t):
		case r.inner != 1<<len(r.mods)-1:
			traits = append(traits, t) // a module on here reads it
		default:
			mootTraits = append(mootTraits, t)
		}
	}
	if len(moot) > 0 || len(mootTraits) > 0 {
		r.log.Warn("the acp-normalize behind this one applies the modules these settings are for and was not given them: give it --client-handles or --client-traits",
			"rule", "P7", "handles", moot, "traits", mootTraits)
	}
	return handles, traits
}

// decidesHere reports whether a module still on in this router owns the
// vendor method: the one that declares it, else the one for methods no
// module knows.
func (r *Router) decidesHere(method string) bool {
	owner := slices.IndexFunc(r.mods, func(m *attached) bool { return m.mod.Handles(method) })
	if owner < 0 {
		owner = slices.IndexFunc(r.mods, func(m *attached) bool { return m.mod.UnknownMethods })
	}
	return owner >= 0 && r.inner&(1<<owner) == 0
}

// identifyClient reads the client's clientInfo.name from its initialize
// request and tells every module's Env what the proxy knows of that
// client (P7), before any module sees the request. r.mu must be held.
func (r *Router) identifyClient(raw []byte) {
	name, _ := rawjson.LookupString(raw, "params", "clientInfo", "name")
	r.client.Identify(name, r.cfg.Modules, r.cfg.Settings)
	if h, t := r.client.Handled(), r.client.TraitList(); len(h) > 0 || len(t) > 0 {
		r.log.Info("methods left to the client, and its traits (from the table of known clients or the flags)", "rule", "P7",
			"client", shorten(name, maxLoggedText), "handles", h, "traits", t)
	}
}

// nested handles an agent that is itself an acp-normalize proxy: prev is
// the advertisement in its initialize result. The modules it lists are
// turned off here, and the advertisement this proxy writes lists the
// inner proxy's modules and then this one's other modules (returned).
// r.mu must be held.
func (r *Router) nested(prev []byte) ([]string, *innerAdvert) {
	var ad innerAdvert
	if err := json.Unmarshal(prev, &ad); err != nil {
		r.log.Warn("the agent's acp-normalize advertisement is unreadable; modules stay on", "rule", "M", "err", err)
		return r.names, nil
	}
	names := slices.Clone(ad.Modules)
	for i, m := range r.mods {
		if slices.Contains(ad.Modules, m.mod.Name) {
			r.inner |= 1 << i
		} else {
			names = append(names, m.mod.Name)
		}
	}
	r.log.Info("the agent is behind another acp-normalize; the modules it applies are off here", "modules", ad.Modules)
	return names, &ad
}

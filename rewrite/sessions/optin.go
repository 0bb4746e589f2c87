package sessions

import (
	"log/slog"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
	"github.com/acp-normalize/acp-normalize/rewrite"
)

// initialize reads the client's opt-in (S0): clientCapabilities.subagents
// as an object, or a truthy clientCapabilities._meta.subagents. An
// opted-in client's initialize goes to the agent with both spellings,
// the missing one added and nothing else changed, so that agents that
// read only one of them (Cursor reads only _meta.subagents) see it;
// while a vendor's NativeOption is off, _meta.subagents is left out (and
// taken out when the client sent it), so that its agent keeps its own
// child sessions off and the proxy makes them (S1). A client that did
// not opt in gets its initialize forwarded untouched and no session
// shape ever (P3).
func (r *rewriter) initialize(f *rewrite.Frame) (rewrite.Verdict, error) {
	var v rewrite.Verdict
	caps, ok := rawjson.Lookup(f.Envelope().Params, "clientCapabilities")
	r.optedIn, r.asked, r.air = false, false, airNone
	if !ok || rawjson.FirstByte(caps) != '{' {
		return v, nil
	}
	// JetBrains AIR with native child sessions gets them as an opted-in
	// client does, in its draft dialect (J1); the agent is asked as for
	// an opted-in client, so that the agents that give their own do.
	r.air = readAir(caps)
	std, _ := rawjson.Lookup(caps, "subagents")
	metaObj, hasMeta := rawjson.Lookup(caps, "_meta")
	metaValue, _ := rawjson.Lookup(metaObj, "subagents")
	hasStd, hasMetaOn := rawjson.FirstByte(std) == '{', rawjson.Truthy(metaValue)
	r.optedIn = hasStd || hasMetaOn || r.air == airNative
	if !r.optedIn {
		return v, nil
	}
	native := r.nativeOn()
	r.asked = native
	out := f.Raw
	var err error
	path := func(p ...string) []string { return append([]string{"params", "clientCapabilities"}, p...) }
	if !hasStd {
		if out, err = rawjson.Set(out, []byte("{}"), path("subagents")...); err != nil {
			return v, rewrite.RuleErrorf("S0", "adding clientCapabilities.subagents: %w", err)
		}
	}
	switch {
	case native && !hasMetaOn && hasMeta && rawjson.FirstByte(metaObj) == 'n':
		// "_meta": null is no _meta (the schema's type is object or null).
		if out, err = rawjson.Set(out, []byte(`{"subagents":true}`), path("_meta")...); err != nil {
			return v, rewrite.RuleErrorf("S0", "adding clientCapabilities._meta.subagents: %w", err)
		}
	case native && !hasMetaOn && hasMeta && rawjson.FirstByte(metaObj) != '{':
		r.once(slog.LevelWarn, "meta not an object", "clientCapabilities._meta is no object: _meta.subagents not added", "rule", "S0")
		r.asked = false
	case native && !hasMetaOn:
		if out, err = rawjson.Set(out, []byte("true"), path("_meta", "subagents")...); err != nil {
			return v, rewrite.RuleErrorf("S0", "adding clientCapabilities._meta.subagents: %w", err)
		}
	case !native && metaValue != nil:
		if out, err = rawjson.Delete(out, path("_meta", "subagents")...); err != nil {
			return v, rewrite.RuleErrorf("S0", "leaving out clientCapabilities._meta.subagents: %w", err)
		}
	}
	if len(out) != len(f.Raw) || string(out) != string(f.Raw) {
		v.Replace(out)
	}
	return v, nil
}

// nativeOn reports whether every vendor's NativeOption is on: then the
// agent, whichever it is, is asked for its own child sessions.
func (r *rewriter) nativeOn() bool {
	for _, t := range r.traits {
		if t.hasNative && !r.env.Settings.On(t.native) {
			return false
		}
	}
	return true
}

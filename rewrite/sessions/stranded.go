package sessions

import (
	"log/slog"
	"slices"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/rewrite/launch"
	"github.com/acp-normalize/acp-normalize/rewrite/meta"
)

// ChildMember is the member of _meta["acp-normalize"] that names the
// child session a re-homed request came from (S7).
const ChildMember = "childSessionId"

// maxWatched bounds the hidden children whose frames the module watches
// one by one (S7; P6: each watched trigger costs every frame a little).
// Past it the module watches every frame that names a session
// (watchAllTrigger) and finds hidden children in its table, so no child
// loses S7 because later ones came: only a connection with that many
// hidden children pays for it.
const maxWatched = 16

// watchAllTrigger selects every frame that names a session.
const watchAllTrigger = `"sessionId"`

// hiddenChild returns the child session sid when it is one the client,
// which did not opt in, was never told of (S7); nil otherwise: never one
// of the client's own sessions.
func (r *rewriter) hiddenChild(sid string) *child {
	if r.optedIn || sid == "" || r.clientKnows(sid) {
		return nil
	}
	if ch, ok := r.children.Get(sid); ok && ch.hidden {
		return ch
	}
	return nil
}

// watch has the router hand the module every frame that names child, a
// session the client was never told of (S7), without any other frame
// being decoded for it (P1).
func (r *rewriter) watch(child string) {
	if r.watchingAll || slices.Contains(r.watching, child) {
		return
	}
	if len(r.watching) < maxWatched && r.env.Watch(string(rawjson.Text(child))) {
		r.watching = append(r.watching, child)
		return
	}
	if !r.env.Watch(watchAllTrigger) {
		r.once(slog.LevelWarn, "watch all", "too many hidden subagent sessions to watch: requests of the later ones may reach the client on a session it does not know",
			"rule", "S7", "watched", len(r.watching))
		return
	}
	r.once(slog.LevelInfo, "watch all", "many subagent sessions hidden from the client: every frame that names a session is now read for them",
		"rule", "S7", "watched", len(r.watching))
	r.watchingAll = true
	for _, c := range r.watching {
		r.env.Unwatch(string(rawjson.Text(c)))
	}
	r.watching = nil
}

func (r *rewriter) unwatch(child string) {
	if i := slices.Index(r.watching, child); i >= 0 {
		r.env.Unwatch(string(rawjson.Text(child)))
		r.watching = slices.Delete(r.watching, i, i+1)
	}
}

// hiddenNotification drops a notification on a hidden child session: the
// client never heard of that session (S7). Logged once per session.
func (r *rewriter) hiddenNotification(sid string) rewrite.Verdict {
	r.once(slog.LevelInfo, "hidden\x00"+sid, "frames of a subagent session the client was never told of are dropped (it did not declare clientCapabilities.subagents)",
		"rule", "S7", "sessionId", sid)
	var v rewrite.Verdict
	v.DropFrame()
	return v
}

// rehome returns the session a hidden child's request goes to: the
// first of its ancestors the client knows, at any depth (S7). The walk
// takes at most one step per child the module holds, so a cycle the
// agent made of its announcements ends it; then the child's root goes.
func (r *rewriter) rehome(ch *child) string {
	parent := ch.parent
	for range r.children.Len() + 1 {
		if r.clientKnows(parent) {
			return parent
		}
		p, ok := r.children.Get(parent)
		if !ok || !p.hidden {
			return parent
		}
		parent = p.parent
	}
	if ch.root != "" {
		return ch.root
	}
	return parent
}

// agentRequest handles an agent request with params.sessionId other than
// a permission request (fs/*, terminal/*, elicitation/create): one on a
// hidden child is re-homed (S7), with the link in _meta of obj.
func (r *rewriter) agentRequest(f *rewrite.Frame, obj ...string) (rewrite.Verdict, error) {
	sid, _ := rawjson.LookupString(f.Envelope().Params, "sessionId")
	ch := r.hiddenChild(sid)
	if ch == nil {
		return rewrite.Verdict{}, nil
	}
	var c change
	if err := r.rehomed(&c, f.Raw, sid, ch, obj); err != nil {
		return rewrite.Verdict{}, err
	}
	return c.verdict(f.Raw)
}

// rehomed adds the edits that move a hidden child's request to its
// parent (S7): params.sessionId, and childSessionId and, when known,
// parentToolCallId in _meta["acp-normalize"] of obj. The request keeps
// its id, so the client's answer goes back to the agent unchanged.
func (r *rewriter) rehomed(c *change, frame []byte, sid string, ch *child, obj []string) error {
	parent := r.rehome(ch)
	out, err := meta.Set(frame, rawjson.Text(sid), ChildMember, obj...)
	if err == nil && ch.toolCallID != "" {
		if _, has := rawjson.Lookup(out, append(append([]string(nil), obj...), "_meta", metaKey, meta.ParentMember)...); !has {
			out, err = meta.SetParent(out, rawjson.Text(ch.toolCallID), obj...)
		}
	}
	if err == nil {
		out, err = rawjson.Set(out, rawjson.Text(parent), "params", "sessionId")
	}
	if err != nil {
		return rewrite.RuleErrorf("S7", "%w", err)
	}
	c.base = out
	r.once(slog.LevelInfo, "rehomed\x00"+sid, "a request of a subagent session the client was never told of goes to its parent session",
		"rule", "S7", "sessionId", sid, "parent", parent)
	return nil
}

// permission handles a session/request_permission: a hidden child's is
// re-homed (S7); one the vendor linked to a launch call moves to its
// child and counts as the subagent working (S5, S8); one about a launch
// call itself keeps the call's snapshot from going back (S8), and
// announces its child when it is the call's first frame (S4).
func (r *rewriter) permission(f *rewrite.Frame) (rewrite.Verdict, error) {
	params := f.Envelope().Params
	var p [2][]byte
	if rawjson.Pick(params, []string{"sessionId", "toolCall"}, p[:]) != nil {
		return rewrite.Verdict{}, nil
	}
	sid, _ := rawjson.DecodeString(p[0])
	tc := p[1]
	var c change
	if ch := r.hiddenChild(sid); ch != nil {
		obj := toolCallPath
		if rawjson.FirstByte(tc) != '{' {
			obj = toolCallPath[:1] // no toolCall: the link goes on params
		}
		if err := r.rehomed(&c, f.Raw, sid, ch, obj); err != nil {
			return rewrite.Verdict{}, err
		}
		return c.verdict(f.Raw)
	}
	if rawjson.FirstByte(tc) != '{' {
		return rewrite.Verdict{}, nil
	}
	metaObj, _ := rawjson.Lookup(tc, "_meta")
	mk, err := readMarks(metaObj)
	if err != nil {
		return rewrite.Verdict{}, err
	}
	session := sid
	if mk.parent != "" {
		session = r.childFrame(&c, sid, mk.parent)
	}
	if mk.snapshot != nil {
		id, _ := rawjson.LookupString(tc, "toolCallId")
		if err := r.launchFrame(&c, launch.Key{Session: sid, ToolCallID: id}, session, "", mk.snapshot, nil, toolCallPath); err != nil {
			return rewrite.Verdict{}, err
		}
		if r.air == airMarker {
			r.airMark(&c, f.Raw, toolCallPath) // J1
		}
	}
	if r.zed != nil && mk.parent != "" {
		r.zedPermission(&c, sid, mk.parent) // Z2
	}
	return c.verdict(f.Raw)
}

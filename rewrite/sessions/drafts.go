package sessions

import (
	"log/slog"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/rewrite/launch"
	"github.com/acp-normalize/acp-normalize/rewrite/meta"
)

// spawned translates a draft subagent_spawned on the agent's session sid
// (S2, S6). An opted-in client gets the standard subagent_update (title
// the draft's name, description its task unless that is the prompt,
// state running, cancel when the draft offered it), the prompt as a
// session_message, and the launch call the draft names (Cursor:
// _meta.cursor.toolCallId, SessionTraits.DraftMeta) gets the
// {"type":"session"} link. A client
// that did not opt in gets none of it: the launch call's snapshot gets
// childSessionId, agentId and model, and the child is hidden from it
// (S7). The draft frame itself never reaches the client (it is no v1
// sessionUpdate, P3).
func (r *rewriter) spawned(sid string, upd []byte) (rewrite.Verdict, error) {
	var v rewrite.Verdict
	v.DropFrame()
	kid, _ := rawjson.LookupString(upd, "subagentSessionId")
	if kid == "" {
		r.once(slog.LevelWarn, "spawn without child", "subagent_spawned without subagentSessionId dropped", "rule", "S6", "sessionId", sid)
		return v, nil
	}
	if !r.mayBeChild(sid, kid) {
		r.once(slog.LevelInfo, "not a child\x00"+kid, "a draft announces a session that is no child of its (the client's own, the one it is sent on, or one the proxy made) as a subagent: dropped",
			"rule", "S7", "sessionId", sid, "subagentSessionId", kid)
		return v, nil
	}
	names := r.draftNames(upd)
	tcid := names.toolCallID
	key := launch.Key{Session: sid, ToolCallID: tcid}
	var cl *call
	if tcid != "" {
		cl = r.spawnedCall(key, sid)
	}
	if cl != nil && cl.child != "" && !cl.own {
		// The proxy made this call's child already (no draft came before
		// the call ended): the draft's child is announced, not linked, so
		// the call keeps one link.
		r.log.Debug("draft child after a synthesized one: not linked to the call", "rule", "S2", "toolCallId", tcid)
		cl = nil
	}
	if cl != nil {
		cl.child, cl.own = kid, true
		cl.fold.childSessionID = kid
		cl.fold.agentID, cl.fold.model = names.agentID, names.model
	}
	session := sid
	if cl != nil {
		session = cl.session
	}
	name, _ := rawjson.LookupString(upd, "name")
	task, _ := rawjson.LookupString(upd, "task")
	prompt, _ := rawjson.LookupString(upd, "prompt")
	r.children.Put(kid, &child{parent: session, root: r.rootOf(session), agentSession: sid, toolCallID: tcid, hidden: !r.optedIn,
		airSpawned: r.air == airNative, airPrompt: prompt != ""})
	if !r.optedIn {
		r.watch(kid)
		return r.foldUpdate(v, cl, key)
	}
	if r.air == airNative {
		// AIR reads the agent's own draft as it came (J1); the launch
		// call's snapshot still learns what it says (S6).
		if cl != nil {
			cl.promptSent = true
		}
		return r.foldUpdate(rewrite.Verdict{}, cl, key)
	}
	if prompt == "" && cl != nil && cl.has() {
		if s, err := cl.sub(); err == nil {
			prompt = deref(s.Prompt)
		}
	}
	u := subagentUpdate{SessionUpdate: "subagent_update", SessionID: kid, Title: name, State: &childState{State: "running"}}
	if task != prompt {
		u.Description = task
	}
	if prompt == "" {
		prompt = task // what the child was asked, when the draft says no more (S6)
	}
	if caps, ok := rawjson.Lookup(upd, "capabilities", "cancel"); ok && rawjson.FirstByte(caps) == '{' {
		u.Capabilities = &capabilities{Cancel: &struct{}{}}
	}
	var frames [][]byte
	r.send(&frames, session, u)
	if prompt != "" {
		r.send(&frames, session, promptMessage(session, kid, prompt))
		if cl != nil {
			cl.promptSent = true
		}
	}
	if cl != nil && cl.has() && r.env.Client.Emit(rewrite.Finished(cl.acpStatus)) != rewrite.EmitNothing {
		link, err := r.linkFrame(cl, tcid)
		if err != nil {
			return v, rewrite.RuleErrorf("S2", "%w", err)
		}
		if link != nil {
			frames = append(frames, link)
		}
		r.calls.Resize(key)
	}
	for _, b := range frames {
		v.Send(pipe.Client, b)
	}
	return v, nil
}

// draftNames is what a draft says of its launch call and child, under
// its vendor's _meta key.
type draftNames struct{ toolCallID, agentID, model string }

// draftNames reads the first vendor's DraftMeta object a draft carries.
func (r *rewriter) draftNames(upd []byte) draftNames {
	for _, t := range r.traits {
		if t.draftMeta == "" {
			continue
		}
		obj, ok := rawjson.Lookup(upd, "_meta", t.draftMeta)
		if !ok || rawjson.FirstByte(obj) != '{' {
			continue
		}
		var d draftNames
		d.toolCallID, _ = rawjson.LookupString(obj, "toolCallId")
		d.agentID, _ = rawjson.LookupString(obj, "agentId")
		d.model, _ = rawjson.LookupString(obj, "model")
		return d
	}
	return draftNames{}
}

// spawnedCall returns the launch call a subagent_spawned names, a fresh
// entry when it is unknown or ended: the agent reuses ids across turns
// and may spawn before it sends the new call's tool_call (C6).
func (r *rewriter) spawnedCall(key launch.Key, sid string) *call {
	cl, ok := r.calls.Get(key)
	if !ok || cl.status.Final() {
		cl = &call{session: sid}
		r.calls.Put(key, cl)
	}
	return cl
}

// linkFrame returns the tool_call_update that links the agent's own
// child to its launch call (S2) with the snapshot: its content replaces
// the whole list on the client, so it repeats the content the client has
// and appends the link. When that content was too large to keep, no
// frame is sent: the link joins the call's next frame with content.
func (r *rewriter) linkFrame(cl *call, toolCallID string) ([]byte, error) {
	s, err := cl.sub()
	if err != nil {
		return nil, err
	}
	folded := *s
	cl.fold.apply(&folded, s.Status)
	cl.setSub(&folded)
	u := toolCallUpdate{SessionUpdate: "tool_call_update", ToolCallID: toolCallID,
		Meta: meta.Object(meta.SubagentMember, cl.raw)}
	switch {
	case r.env.Client.Emit(rewrite.Finished(cl.acpStatus)) != rewrite.EmitAll:
		// P7: a finished call's update carries the snapshot alone for
		// this client; the link joins a later frame with content.
	case !cl.seenContent:
		u.Content = appendEmptyLink(cl.child)
	case cl.lastContent != nil:
		arr, err := appendLink(cl.lastContent, cl.child)
		if err != nil {
			return nil, err
		}
		u.Content = arr
	default:
		r.log.Debug("session link left for the call's next frame with content: its content was not kept", "rule", "S2", "toolCallId", toolCallID)
	}
	if u.Content != nil {
		u.Status = cl.acpStatus // P7: content, so the call's last status
		cl.linked = true
		cl.keepContent(u.Content)
	}
	return sessionUpdateFrame(cl.session, u)
}

// foldUpdate finishes v with the launch call's snapshot update when what
// the draft said changed it (S6: a client that did not opt in learns it
// from the snapshot).
func (r *rewriter) foldUpdate(v rewrite.Verdict, cl *call, key launch.Key) (rewrite.Verdict, error) {
	if cl == nil || !cl.has() || r.env.Client.Emit(rewrite.Finished(cl.acpStatus)) == rewrite.EmitNothing {
		return v, nil // P7: no update after a finished call for a client that shows it as new
	}
	s, err := cl.sub()
	if err != nil {
		return v, rewrite.RuleErrorf("S6", "%w", err)
	}
	folded := *s
	if !cl.fold.apply(&folded, s.Status) {
		return v, nil
	}
	cl.setSub(&folded)
	r.calls.Resize(key)
	b, err := r.snapshotUpdate(cl, key.ToolCallID)
	if err != nil {
		return v, rewrite.RuleErrorf("S6", "%w", err)
	}
	v.Send(pipe.Client, b)
	return v, nil
}

// draftState translates a draft subagent_state_update (S2, S6): the
// child is the frame's subagentSessionId, else its own session. An
// opted-in client gets the standard state on the parent session; every
// client gets the launch call's snapshot with the state folded in.
func (r *rewriter) draftState(sid string, upd []byte) (rewrite.Verdict, error) {
	var v rewrite.Verdict
	v.DropFrame()
	id, _ := rawjson.LookupString(upd, "subagentSessionId")
	if id == "" {
		id = sid
	}
	ch, ok := r.children.Get(id)
	if !ok || ch.synthesized {
		// A child the proxy made has the state of its launch call (S4),
		// whatever a draft says of it.
		r.once(slog.LevelInfo, "state for unknown child", "subagent_state_update for a child the agent never spawned dropped", "rule", "S6", "sessionId", sid)
		return v, nil
	}
	word, _ := rawjson.LookupString(upd, "state")
	var st childState
	var status meta.Status
	switch word {
	case "completed":
		st, status = childState{"idle", "end_turn"}, meta.StatusCompleted
	case "cancelled":
		st, status = childState{"idle", "cancelled"}, meta.StatusCancelled
	case "failed", "disconnected":
		st, status = childState{State: "idle"}, meta.StatusFailed
	case "running":
		st, status = childState{State: "running"}, meta.StatusRunning
	default:
		r.once(slog.LevelInfo, "draft state "+word, "subagent_state_update with an unknown state dropped", "rule", "S6", "state", word)
		return v, nil
	}
	if r.air == airNative {
		// AIR: the end once, on the parent, naming the child (J1); the
		// agent's frame as it came when it has that form already.
		if ch.airEnded || word == "running" {
			// nothing: AIR's draft states are ends, each child has one
		} else if sub, _ := rawjson.LookupString(upd, "subagentSessionId"); sid == ch.parent && sub != "" {
			v = rewrite.Verdict{}
			ch.airEnded = true
		} else {
			ch.airEnded = true
			b, err := sessionUpdateFrame(ch.parent, stateDraft{SessionUpdate: "subagent_state_update", SubagentSessionID: id, State: word})
			if err != nil {
				return v, rewrite.RuleErrorf("J1", "%w", err)
			}
			v.Send(pipe.Client, b)
		}
	} else if r.optedIn {
		b, err := sessionUpdateFrame(ch.parent, subagentUpdate{SessionUpdate: "subagent_update", SessionID: id, State: &st})
		if err != nil {
			return v, rewrite.RuleErrorf("S6", "%w", err)
		}
		v.Send(pipe.Client, b)
	}
	key := launch.Key{Session: ch.agentSession, ToolCallID: ch.toolCallID}
	cl, ok := r.calls.Get(key)
	if !ok || ch.toolCallID == "" {
		return v, nil
	}
	cl.fold.status.Follow(status)
	return r.foldUpdate(v, cl, key)
}

// nativeUpdate handles a standard subagent_update the agent sent itself
// (S3): an opted-in client gets it unchanged and the child is the
// agent's; a client that did not opt in never gets one (P3), and the
// child is hidden from it (S7).
func (r *rewriter) nativeUpdate(sid string, upd []byte) rewrite.Verdict {
	id, _ := rawjson.LookupString(upd, "sessionId")
	if !r.mayBeChild(sid, id) {
		// The client's own session, or the one it is sent on, is no
		// child: not recorded as one (S7, P6); an opted-in client gets
		// the agent's frame as it came (S3).
		r.once(slog.LevelInfo, "not a child\x00"+id, "a subagent_update announces a session that is no child of its (the client's own, the one it is sent on, or one the proxy made) as a subagent: not taken for a child",
			"rule", "S7", "sessionId", sid, "childSessionId", id)
		if r.optedIn && r.air != airNative {
			return rewrite.Verdict{}
		}
		return r.unasked("subagent_update", sid)
	}
	if r.optedIn {
		if _, known := r.children.Get(id); !known && id != "" {
			r.children.Put(id, &child{parent: sid, root: r.rootOf(sid), agentSession: sid})
		}
		if r.air == airNative {
			return r.airNativeUpdate(sid, upd) // J1
		}
		return rewrite.Verdict{}
	}
	if _, known := r.children.Get(id); !known && id != "" {
		r.children.Put(id, &child{parent: sid, root: r.rootOf(sid), agentSession: sid, hidden: true})
		r.watch(id)
	}
	return r.unasked("subagent_update", sid)
}

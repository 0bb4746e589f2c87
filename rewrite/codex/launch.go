package codex

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/rewrite/launch"
	"github.com/acp-normalize/acp-normalize/rewrite/meta"
)

// launchTitle is the title (and toolName) of Codex's launch calls.
const launchTitle = "spawnAgent"

// spawnCall is what the module knows of one spawnAgent call.
type spawnCall struct {
	snap meta.Subagent
	// bareTitle: the vendor's latest title is only the tool's name;
	// retitled: the client has been sent the V3 title since.
	bareTitle, retitled bool
	// vendorStatus is the last ACP status Codex sent for the call (P7).
	vendorStatus string
}

// update handles a session/update: a frame of a launch call gets the
// snapshot (V2, V3, V6); another call's frame that carries the final state
// of a launched child is followed by an update of the launch call (V5).
func (r *rewriter) update(f *rewrite.Frame) (rewrite.Verdict, error) {
	var v rewrite.Verdict
	tc, ok := launch.ToolCallOf(f)
	if !ok {
		return v, nil
	}
	upd, key, sid := tc.Update, tc.Key, tc.Key.Session
	tag := tc.Tag
	l, known := r.calls.Get(key)
	title, hasTitle := rawjson.LookupString(upd, "title")
	_, hasSender := rawjson.Lookup(upd, "rawInput", "senderThreadId")
	startsLaunch := hasTitle && title == launchTitle && hasSender
	switch {
	case tag == "tool_call" && !startsLaunch:
		// A new call under a known id is another call (ids are the
		// model's call ids, unique per thread only).
		if known {
			r.calls.Delete(key)
		}
		return r.childEnd(f, sid, upd)
	case tag == "tool_call" || (!known && startsLaunch):
		l = &spawnCall{snap: meta.Subagent{Vendor: Name, ToolName: launchTitle}}
	case !known:
		return r.childEnd(f, sid, upd)
	}
	l.observe(upd)
	snap, err := meta.SubagentEdit(f.Raw, &l.snap, "params", "update")
	if err != nil {
		return v, rewrite.RuleErrorf("V2", "%w", err)
	}
	var edits []rawjson.Edit
	if hasTitle {
		l.bareTitle = title == launchTitle
	}
	// V3: on every frame that carries the bare title, and on the first
	// frame after the text became known when the title came without it.
	st, hasStatus := rawjson.LookupString(upd, "status")
	if st != "" {
		l.vendorStatus = st
	}
	if t := meta.Title("", deref(l.snap.Prompt)); t != "" && l.bareTitle && (hasTitle || !l.retitled) {
		edits = append(edits, rawjson.Edit{Path: []string{"params", "update", "title"}, Value: rawjson.Text(t)})
		l.retitled = true
		if !hasStatus && l.vendorStatus != "" {
			// P7: a title on a status-less frame says the status too.
			edits = append(edits, rawjson.Edit{Path: []string{"params", "update", "status"}, Value: rawjson.Text(l.vendorStatus)})
		}
	}
	out, err := rawjson.SetAll(f.Raw, append(edits, snap)...)
	if err != nil {
		return v, rewrite.RuleErrorf("V2", "adding the snapshot and title: %w", err)
	}
	r.calls.Put(key, l)
	v.Replace(out)
	return v, nil
}

// observe accumulates what a launch-call frame says (V2): a field a later
// frame leaves out or sends empty keeps its value.
func (l *spawnCall) observe(upd []byte) {
	s := &l.snap
	if raw, ok := rawjson.Lookup(upd, "rawInput"); ok {
		setText(&s.Prompt, raw, "prompt")
		setText(&s.Model, raw, "model")
		setText(&s.Effort, raw, "reasoningEffort")
		if ids, ok := rawjson.Lookup(raw, "receiverThreadIds"); ok {
			_ = rawjson.Elements(ids, func(e []byte) bool {
				if child, ok := rawjson.DecodeString(e); ok && child != "" {
					s.AgentID = &child
				}
				return false // the first child is the one spawned
			})
		}
		if s.AgentID != nil {
			if state, ok := rawjson.Lookup(raw, "agentsStates", *s.AgentID); ok {
				l.childState(state)
			}
		}
	}
	acp, _ := rawjson.LookupString(upd, "status")
	switch to := meta.FromToolCall(acp); to {
	default:
		advance(s, to)
	case meta.StatusCompleted:
		// The spawn call completes at once while the child goes on,
		// unless the child's own state is already final (V6).
		if s.Status.Rank() < 3 {
			advance(s, meta.StatusLaunched)
			background := true
			s.Background = &background
		}
	}
}

// childState applies one agentsStates entry, {status, message}, of the
// launch's child; it reports whether the snapshot changed.
func (l *spawnCall) childState(state []byte) bool {
	s := &l.snap
	if final(s.Status) {
		return false // a final status is never replaced (P4)
	}
	changed := false
	status, ok := rawjson.LookupString(state, "status")
	if ok && status != "" {
		raw := rawjson.Text(status)
		if !bytes.Equal(s.Raw["agentStatus"], raw) {
			if s.Raw == nil {
				s.Raw = map[string]json.RawMessage{}
			}
			s.Raw["agentStatus"] = raw
			changed = true
		}
		before := s.Status
		advance(s, childStatus(status))
		changed = changed || s.Status != before
	}
	if status == "completed" || status == "errored" {
		before := deref(s.ResultText)
		setText(&s.ResultText, state, "message")
		changed = changed || deref(s.ResultText) != before
	}
	return changed
}

// childStatus maps a Codex agent status to the snapshot's (V6); "" for a
// status that says nothing new (notFound, unknown ones).
func childStatus(status string) meta.Status {
	switch status {
	case "pendingInit":
		return meta.StatusPending
	case "running":
		return meta.StatusRunning
	case "completed":
		return meta.StatusCompleted
	case "errored":
		return meta.StatusFailed
	case "interrupted", "shutdown":
		return meta.StatusCancelled
	}
	return ""
}

// advance moves the snapshot's status forward only: never to a lower
// rank, and a final status other than launched is kept (P4).
func advance(s *meta.Subagent, to meta.Status) {
	if to != "" && to.Rank() >= s.Status.Rank() && !final(s.Status) {
		s.Status = to
	}
}

// final reports whether a status is an end: completed, failed or
// cancelled (launched is not: the child's end may follow, V5).
func final(s meta.Status) bool {
	return s == meta.StatusCompleted || s == meta.StatusFailed || s == meta.StatusCancelled
}

// childEnd handles a frame of another multi-agent call (wait, closeAgent,
// ...): when its rawInput.agentsStates changes what a launch call of the
// same session knows of its child, the launch call gets a
// tool_call_update with the new snapshot right after this frame (V5). The
// frame itself is forwarded unchanged.
//
// The object is read as a JSON parser reads it: of members naming the
// same child (duplicate keys, however spelled) the last one is the
// child's state. So a frame adds at most one update per launch call it
// names, whatever its length (60,000 duplicates of one child
// made 60,000 updates), in the launch calls' order rather than the
// members' (a frame with its members reordered gets the same verdict).
func (r *rewriter) childEnd(f *rewrite.Frame, sid string, upd []byte) (rewrite.Verdict, error) {
	var v rewrite.Verdict
	states, ok := rawjson.Lookup(upd, "rawInput", "agentsStates")
	if !ok || rawjson.FirstByte(states) != '{' {
		return v, nil
	}
	launches := r.launchesOf(sid)
	if len(launches) == 0 {
		return v, nil
	}
	// The last state of each launched child the object names: at most
	// one entry per launch call of the session, however many members.
	last := make(map[string][]byte, len(launches))
	err := rawjson.Members(states, func(m rawjson.Member) bool {
		if child, ok := rawjson.UnescapeKey(m.Key); ok {
			if _, launched := launches[child]; launched {
				last[child] = m.Value
			}
		}
		return true
	})
	if err != nil {
		return v, rewrite.RuleErrorf("V5", "%w", err)
	}
	var errs []error
	var changed []launch.Key
	r.calls.Each(func(k launch.Key, l *spawnCall) bool {
		if k.Session != sid || l.snap.AgentID == nil || launches[*l.snap.AgentID] != k {
			return true
		}
		state, named := last[*l.snap.AgentID]
		if !named || !l.childState(state) {
			return true
		}
		changed = append(changed, k)
		if r.client.Emit(rewrite.Finished(l.vendorStatus)) == rewrite.EmitNothing {
			return true // P7: the client would show it as a new entry
		}
		emit, err := launchUpdate(k, &l.snap)
		if err != nil {
			errs = append(errs, err)
			return true
		}
		v.Send(pipe.Client, emit)
		return true
	})
	for _, k := range changed {
		r.calls.Resize(k) // the snapshot grew (P6)
	}
	if len(errs) > 0 {
		return v, rewrite.RuleErrorf("V5", "%w", errs[0])
	}
	return v, nil
}

// launchesOf returns the launch calls of session sid by their child
// thread; of two launches of the same child the newest wins.
func (r *rewriter) launchesOf(sid string) map[string]launch.Key {
	var found map[string]launch.Key
	r.calls.Each(func(k launch.Key, l *spawnCall) bool {
		if k.Session == sid && l.snap.AgentID != nil {
			if found == nil {
				found = map[string]launch.Key{}
			}
			found[*l.snap.AgentID] = k // oldest first: a newer one replaces it
		}
		return true
	})
	return found
}

// launchUpdate builds the tool_call_update that carries a launch call's
// snapshot and nothing else (no status: P4).
func launchUpdate(k launch.Key, s *meta.Subagent) ([]byte, error) {
	params := make([]byte, 0, 256)
	params = append(params, `{"sessionId":`...)
	params = rawjson.AppendString(params, k.Session)
	params = append(params, `,"update":{"sessionUpdate":"tool_call_update","toolCallId":`...)
	params = rawjson.AppendString(params, k.ToolCallID)
	params = append(params, `,"_meta":`...)
	params = append(params, meta.Object(meta.SubagentMember, s.JSON())...)
	params = append(params, `}}`...)
	frame, err := rewrite.Notification("session/update", params)
	if err != nil {
		return nil, fmt.Errorf("building the launch call's update: %w", err)
	}
	return frame, nil
}

// setText sets *dst to the non-empty string at key of obj; anything else
// (absent, null, "", another type) leaves it as it was.
func setText(dst **string, obj []byte, key string) {
	if s, ok := rawjson.LookupString(obj, key); ok && s != "" {
		*dst = &s
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

package codex

import (
	"bytes"
	"encoding/json"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/rewrite/launch"
	"github.com/acp-normalize/acp-normalize/rewrite/meta"
)

// launchTitle is the title (and toolName) of Codex's launch calls.
const launchTitle = "spawnAgent"

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
	c, known := r.calls.Get(key)
	title, hasTitle := rawjson.LookupString(upd, "title")
	_, hasSender := rawjson.Lookup(upd, "rawInput", "senderThreadId")
	startsLaunch := hasTitle && title == launchTitle && hasSender
	switch {
	case tag == "tool_call" && !startsLaunch:
		// A new call under a known id is another call (ids are the
		// model's call ids, unique per thread only).
		if known {
			r.calls.DropKey(key)
		}
		return r.childEnd(f, sid, upd)
	case tag == "tool_call" || (!known && startsLaunch):
		c = r.calls.Start(key, Name, launchTitle, launchTitle)
	case !known:
		return r.childEnd(f, sid, upd)
	}
	observe(&c.Snap, upd)
	r.calls.Changed(key)
	out, err := c.Annotate(f.Raw, "params", "update")
	if err != nil {
		return v, rewrite.RuleErrorf("V2", "%w", err)
	}
	v.Replace(out)
	return v, nil
}

// observe accumulates what a launch-call frame says (V2): a field a later
// frame leaves out or sends empty keeps its value.
func observe(s *meta.Subagent, upd []byte) {
	if raw, ok := rawjson.Lookup(upd, "rawInput"); ok {
		launch.SetText(&s.Prompt, raw, "prompt")
		launch.SetText(&s.Model, raw, "model")
		launch.SetText(&s.Effort, raw, "reasoningEffort")
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
				childState(s, state)
			}
		}
	}
	acp, _ := rawjson.LookupString(upd, "status")
	switch to := meta.FromToolCall(acp); {
	case !to.Completed():
		s.Status.Follow(to)
	case !s.Status.Final():
		// The spawn call completes at once while the child goes on,
		// unless the child's own state is already final (V6).
		s.Status.Follow(meta.StatusLaunched)
		s.Background = launch.Bool(true)
	}
}

// childState applies one agentsStates entry, {status, message}, of the
// launch's child to its snapshot s; it reports whether s changed.
func childState(s *meta.Subagent, state []byte) bool {
	if s.Status.Ended() {
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
		changed = s.Status.Follow(childStatus(status)) || changed
	}
	if status == "completed" || status == "errored" {
		before := deref(s.ResultText)
		launch.SetText(&s.ResultText, state, "message")
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
	rawSession, _ := f.Lookup("params", "sessionId")
	var errs []error
	var changed []launch.Key
	r.calls.Each(func(k launch.Key, c *launch.Call) bool {
		if k.Session != sid || c.Snap.AgentID == nil || launches[*c.Snap.AgentID] != k {
			return true
		}
		state, named := last[*c.Snap.AgentID]
		if !named || !childState(&c.Snap, state) {
			return true
		}
		changed = append(changed, k)
		emit, err := c.UpdateFrame(rawSession, k.ToolCallID)
		switch {
		case err != nil:
			errs = append(errs, err)
		case emit != nil: // nil: P7, the client would show it as a new entry
			v.Send(pipe.Client, emit)
		}
		return true
	})
	for _, k := range changed {
		r.calls.Changed(k) // the snapshot grew (P6)
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
	r.calls.Each(func(k launch.Key, c *launch.Call) bool {
		if k.Session == sid && c.Snap.AgentID != nil {
			if found == nil {
				found = map[string]launch.Key{}
			}
			found[*c.Snap.AgentID] = k // oldest first: a newer one replaces it
		}
		return true
	})
	return found
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

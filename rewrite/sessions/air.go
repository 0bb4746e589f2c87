package sessions

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"math"
	"slices"
	"strconv"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/rewrite/meta"
)

// JetBrains AIR (rule J1). AIR declares itself with
// clientCapabilities._meta.jetbrains.air = {"version": N, "capabilities":
// [...]} and reads subagents in the earlier draft of the Subagent
// Sessions RFD (subagent_spawned, subagent_state_update), the dialect
// Cursor sends, once it declares nativeSubagentSessions. Without that
// capability it marks a launch call with _meta.jetbrains.air.subagent.

// airMode is what the client declared of AIR.
type airMode uint8

const (
	airNone   airMode = iota
	airMarker         // AIR without nativeSubagentSessions: launch calls are marked
	airNative         // AIR with nativeSubagentSessions: child sessions in the draft dialect
)

// airCapability is the AIR capability of native child sessions.
const airCapability = "nativeSubagentSessions"

// LaunchMember is the member of _meta["acp-normalize"] of a
// subagent_spawned the proxy makes for AIR that names the launch call the
// child belongs to (J1; Cursor's own drafts name it in _meta.cursor).
const LaunchMember = "toolCallId"

// readAir reads clientCapabilities._meta.jetbrains.air as AIR's agents
// do: AIR when version is an integer of at least 1; native child
// sessions when, besides, capabilities is an array holding the exact
// name. A malformed declaration is no AIR.
func readAir(caps []byte) airMode {
	air, ok := rawjson.Lookup(caps, "_meta", "jetbrains", "air")
	if !ok || rawjson.FirstByte(air) != '{' {
		return airNone
	}
	v, _ := rawjson.Lookup(air, "version")
	n, err := strconv.ParseFloat(string(v), 64)
	if c := rawjson.FirstByte(v); err != nil || !(c == '-' || c >= '0' && c <= '9') || n < 1 || math.IsInf(n, 0) || n != math.Trunc(n) {
		return airNone
	}
	if list, _ := rawjson.Lookup(air, "capabilities"); rawjson.FirstByte(list) == '[' && holds(list, airCapability) {
		return airNative
	}
	return airMarker
}

// airAnswer adds nativeSubagentSessions to the agent's answer to an AIR
// client's initialize (J1): result._meta.jetbrains.air, merged with what
// the agent said there (its version and capabilities kept, the name
// added to its list), never replacing it.
func (r *rewriter) airAnswer(f *rewrite.Frame) (rewrite.Verdict, error) {
	var v rewrite.Verdict
	if _, isErr := rawjson.Lookup(f.Raw, "error"); isErr {
		return v, nil
	}
	edits := r.airAnswerEdits(f.Raw)
	if len(edits) == 0 {
		return v, nil
	}
	out, err := rawjson.SetAll(f.Raw, edits...)
	if err != nil {
		return v, rewrite.RuleErrorf("J1", "advertising nativeSubagentSessions: %w", err)
	}
	v.Replace(out)
	return v, nil
}

// airAnswerEdits returns the edits that name nativeSubagentSessions in
// the initialize answer frame: the whole object from the first of
// _meta, jetbrains, air the agent left out (or null); else the name
// appended to the agent's list, and version 1 when it gave none. None
// when the agent names it already, or put there what is no object (or
// a list that is no array: one warn line).
func (r *rewriter) airAnswerEdits(frame []byte) []rawjson.Edit {
	wrap := []string{"_meta", "jetbrains", "air"}
	path := []string{"result"}
	for i, k := range wrap {
		path = append(path, k)
		obj, ok := rawjson.Lookup(frame, path...)
		switch c := rawjson.FirstByte(obj); {
		case !ok || c == 'n':
			value := []byte(`{"version":1,"capabilities":["` + airCapability + `"]}`)
			for j := len(wrap) - 1; j > i; j-- {
				value = append(append(rawjson.AppendString([]byte("{"), wrap[j]), ':'), append(value, '}')...)
			}
			return []rawjson.Edit{{Path: path, Value: value}}
		case c != '{':
			r.once(slog.LevelWarn, "air answer", "the agent's initialize answer has a "+k+" that is no object: nativeSubagentSessions not advertised", "rule", "J1")
			return nil
		}
	}
	air, _ := rawjson.Lookup(frame, path...)
	var edits []rawjson.Edit
	if _, has := rawjson.Lookup(air, "version"); !has {
		edits = append(edits, rawjson.Edit{Path: append(slices.Clone(path), "version"), Value: []byte("1")})
	}
	list, ok := rawjson.Lookup(air, "capabilities")
	capsPath := append(slices.Clone(path), "capabilities")
	switch {
	case !ok || rawjson.FirstByte(list) == 'n':
		return append(edits, rawjson.Edit{Path: capsPath, Value: []byte(`["` + airCapability + `"]`)})
	case rawjson.FirstByte(list) != '[':
		r.once(slog.LevelWarn, "air answer", "the agent's _meta.jetbrains.air.capabilities is no array: nativeSubagentSessions not advertised", "rule", "J1")
		return nil
	case holds(list, airCapability):
		return nil // the agent says it already
	}
	return append(edits, rawjson.Edit{Path: capsPath, Value: appendElement(list, rawjson.Text(airCapability))})
}

// holds reports whether the JSON array list holds the string name
// (spelled any way a parser reads the same).
func holds(list []byte, name string) bool {
	found := false
	_ = rawjson.Elements(list, func(el []byte) bool {
		s, ok := rawjson.DecodeString(el)
		found = ok && rawjson.FirstByte(el) == '"' && s == name
		return !found
	})
	return found
}

// appendElement returns the JSON array arr with el at its end.
func appendElement(arr, el []byte) []byte {
	empty := true
	_ = rawjson.Elements(arr, func([]byte) bool { empty = false; return false })
	end := bytes.LastIndexByte(arr, ']')
	out := append([]byte(nil), arr[:end]...)
	if !empty {
		out = append(out, ',')
	}
	out = append(out, el...)
	return append(out, arr[end:]...)
}

// airMarkerValue is what a launch call carries for AIR without native
// child sessions (J1).
var airMarkerValue = []byte(`{"version":1,"subagent":true}`)

// airMark adds _meta.jetbrains.air.subagent to a launch call's frame
// for AIR without native child sessions (J1): the object at obj gets
// {"version":1,"subagent":true}, merged into a jetbrains or air object
// the agent put there; one that is no object is the agent's, left as it
// is.
func (r *rewriter) airMark(c *change, frame []byte, obj []string) {
	path := append(slices.Clone(obj), "_meta")
	for _, k := range []string{"jetbrains", "air"} {
		path = append(path, k)
		v, ok := rawjson.Lookup(frame, path...)
		switch ch := rawjson.FirstByte(v); {
		case !ok || ch == 'n':
			value := airMarkerValue
			if k == "jetbrains" {
				value = append(append([]byte(`{"air":`), airMarkerValue...), '}')
			}
			c.edits = append(c.edits, rawjson.Edit{Path: path, Value: value})
			return
		case ch != '{':
			return
		}
	}
	air, _ := rawjson.Lookup(frame, path...)
	if sub, _ := rawjson.Lookup(air, "subagent"); string(sub) != "true" {
		c.edits = append(c.edits, rawjson.Edit{Path: append(slices.Clone(path), "subagent"), Value: []byte("true")})
	}
	if _, has := rawjson.Lookup(air, "version"); !has {
		c.edits = append(c.edits, rawjson.Edit{Path: append(slices.Clone(path), "version"), Value: []byte("1")})
	}
}

// spawnedDraft is a draft subagent_spawned, as AIR reads it.
type spawnedDraft struct {
	SessionUpdate     string          `json:"sessionUpdate"`
	SubagentSessionID string          `json:"subagentSessionId"`
	Name              string          `json:"name"`
	Task              string          `json:"task"`
	Prompt            string          `json:"prompt,omitempty"`
	Capabilities      draftCaps       `json:"capabilities"`
	Meta              json.RawMessage `json:"_meta,omitempty"`
}

// draftCaps are a draft child's capabilities (booleans in the draft).
type draftCaps struct {
	Cancel bool `json:"cancel,omitempty"`
}

// stateDraft is a draft subagent_state_update.
type stateDraft struct {
	SessionUpdate     string `json:"sessionUpdate"`
	SubagentSessionID string `json:"subagentSessionId"`
	State             string `json:"state"`
}

// userChunk is a user_message_chunk or agent_message_chunk: the child's
// prompt or report, for AIR (J1).
type userChunk struct {
	SessionUpdate string          `json:"sessionUpdate"`
	Content       json.RawMessage `json:"content"`
}

// airSend turns what the module would send an opted-in client of a
// child session into AIR's draft dialect (J1): the first word of a child
// is one subagent_spawned on its parent, its end one
// subagent_state_update; patches and running states have no draft form
// and are left out; the prompt goes in the spawn or, when it became
// known later, as the child's first user message.
func (r *rewriter) airSend(frames *[][]byte, sid string, update any) {
	switch u := update.(type) {
	case subagentUpdate:
		ch, ok := r.children.Get(u.SessionID)
		if !ok {
			return
		}
		if !ch.airSpawned {
			ch.airSpawned = true
			d := spawnedDraft{SessionUpdate: "subagent_spawned", SubagentSessionID: u.SessionID, Name: u.Title,
				Task: firstOf(u.prompt, u.Description, u.Title, "Subagent"), Prompt: u.prompt,
				Capabilities: draftCaps{Cancel: u.Capabilities != nil && u.Capabilities.Cancel != nil}}
			if d.Name == "" {
				d.Name = firstOf(u.Description, "Subagent")
			}
			if ch.synthesized && ch.toolCallID != "" {
				d.Meta = meta.Object(LaunchMember, rawjson.Text(ch.toolCallID))
			}
			ch.airPrompt = u.prompt != ""
			r.sendFrame(frames, sid, d)
		}
		if u.State == nil || u.State.State != "idle" || ch.airEnded {
			return
		}
		ch.airEnded = true
		word := u.airState
		if word == "" {
			switch u.State.StopReason {
			case "end_turn":
				word = "completed"
			case "cancelled":
				word = "cancelled"
			default:
				word = "failed"
			}
		}
		r.sendFrame(frames, sid, stateDraft{SessionUpdate: "subagent_state_update", SubagentSessionID: u.SessionID, State: word})
	case sessionMessage:
		ch, ok := r.children.Get(u.RecipientSessionID)
		if !ok || ch.airPrompt {
			return
		}
		ch.airPrompt = true
		for _, block := range u.Content {
			b, err := json.Marshal(block)
			if err != nil {
				continue
			}
			r.sendFrame(frames, u.RecipientSessionID, userChunk{SessionUpdate: "user_message_chunk", Content: b})
		}
	default:
		r.sendFrame(frames, sid, update)
	}
}

// airNativeUpdate turns a standard subagent_update the agent sent (S3:
// Claude's, Codex's) into the draft for AIR (J1).
func (r *rewriter) airNativeUpdate(sid string, upd []byte) rewrite.Verdict {
	var v rewrite.Verdict
	v.DropFrame()
	// Member by member: one of a type the standard does not give (the
	// agent's bug) is left out, never the child's spawn, which the
	// child's frames and requests need (S5).
	id, _ := rawjson.LookupString(upd, "sessionId")
	if id == "" {
		return v
	}
	su := subagentUpdate{SessionUpdate: "subagent_update", SessionID: id}
	su.Title, _ = rawjson.LookupString(upd, "title")
	su.Description, _ = rawjson.LookupString(upd, "description")
	if word, ok := rawjson.LookupString(upd, "state", "state"); ok {
		su.State = &childState{State: word}
		su.State.StopReason, _ = rawjson.LookupString(upd, "state", "stopReason")
	}
	if c, ok := rawjson.Lookup(upd, "capabilities", "cancel"); ok && rawjson.FirstByte(c) == '{' {
		su.Capabilities = &capabilities{Cancel: &struct{}{}}
	}
	var frames [][]byte
	r.airSend(&frames, sid, su)
	for _, b := range frames {
		v.Send(pipe.Client, b)
	}
	return v
}

// airMessage turns a session_message (or chunk) the agent sent into what
// AIR reads (J1), on the session it came on: on a child, from its
// parent, it is the child's prompt, sent as the child's user message; on
// a child, from the child to its parent, it is the child's report, sent
// as the child's agent message (it may be the only copy of the child's
// last words); the copy on the other session of each is left out (the
// parent's launch call and messages carry what it got).
func (r *rewriter) airMessage(sid, tag string, upd []byte) rewrite.Verdict {
	var v rewrite.Verdict
	v.DropFrame()
	to, _ := rawjson.LookupString(upd, "recipientSessionId")
	from, _ := rawjson.LookupString(upd, "senderSessionId")
	kind := ""
	if ch, ok := r.children.Get(to); ok && to == sid && ch.parent == from {
		// Every message the parent sends the child is the child's user
		// message, but the first when the spawn carried the prompt: it
		// is that prompt again.
		if !ch.airPrompt || ch.airHeard {
			kind = "user_message_chunk"
		}
		if tag == "session_message" {
			ch.airPrompt, ch.airHeard = true, true
		}
	} else if ch, ok := r.children.Get(from); ok && from == sid && ch.parent == to {
		kind = "agent_message_chunk"
	}
	if kind == "" {
		r.once(slog.LevelInfo, "air message", "a session message's copy on the other session is left out for JetBrains AIR (the session it concerns gets it)",
			"rule", "J1", "sessionUpdate", tag)
		return v
	}
	content, _ := rawjson.Lookup(upd, "content")
	var blocks [][]byte
	if rawjson.FirstByte(content) == '[' {
		_ = rawjson.Elements(content, func(el []byte) bool { blocks = append(blocks, el); return true })
	} else if rawjson.FirstByte(content) == '{' {
		blocks = append(blocks, content)
	}
	for _, b := range blocks {
		frame, err := sessionUpdateFrame(sid, userChunk{SessionUpdate: kind, Content: bytes.Clone(b)})
		if err == nil {
			v.Send(pipe.Client, frame)
		}
	}
	return v
}

// sendFrame appends the session/update of sid with update to frames, as
// it is (the draft dialect for AIR included).
func (r *rewriter) sendFrame(frames *[][]byte, sid string, update any) {
	b, err := sessionUpdateFrame(sid, update)
	if err != nil {
		r.log.Error("subagent session frame not built", "rule", "J1", "err", err)
		return
	}
	*frames = append(*frames, b)
}

func firstOf(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// airSpawned reports whether AIR got the child's subagent_spawned.
func (r *rewriter) airSpawned(child string) bool {
	ch, ok := r.children.Get(child)
	return ok && ch.airSpawned
}

// airSpawn sends AIR the spawn of call cl's synthesized child, with what
// the snapshot s says of it now (J1).
func (r *rewriter) airSpawn(frames *[][]byte, cl *call, s *meta.Subagent) {
	cl.title, cl.description = r.titleOf(s), deref(s.SubagentType)
	if deref(s.Description) == "" && deref(s.Prompt) == "" && cl.description != "" {
		cl.title = cl.description // the subagent type says more than "Subagent"
	}
	p := deref(s.Prompt)
	cl.promptSent = p != ""
	st := childState{State: "running"}
	r.send(frames, cl.session, subagentUpdate{SessionUpdate: "subagent_update", SessionID: cl.child,
		Title: cl.title, Description: firstOf(deref(s.Description), cl.description), State: &st, prompt: p})
}

// airReload forgets what AIR was sent of the children in session sid's
// tree when AIR loads sid (J1): it rebuilds that thread from the agent's
// replay, so each child the replay announces is spawned and ended anew,
// as on a fresh connection.
func (r *rewriter) airReload(sid string) {
	if r.air != airNative || sid == "" {
		return
	}
	r.children.Each(func(_ string, ch *child) bool {
		if ch.root == sid || ch.parent == sid {
			ch.airSpawned, ch.airEnded, ch.airPrompt, ch.airHeard = false, false, false, false
		}
		return true
	})
}

package sessions

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"strconv"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/rewrite/launch"
	"github.com/acp-normalize/acp-normalize/rewrite/meta"
)

// childPrefix starts the id of every child session the proxy makes.
const childPrefix = "acp-normalize-subagent-"

// childID derives a synthesized child's session id from the parent
// session, the launch call's toolCallId and how many subagents that
// toolCallId launched before in that session (S1): the same session
// replayed gives the same ids. Printable, no newline, whatever the
// toolCallId holds.
func childID(parent, toolCallID string, n int) string {
	h := sha256.New()
	h.Write([]byte(parent))
	h.Write([]byte{0})
	h.Write([]byte(toolCallID))
	h.Write([]byte{0})
	h.Write([]byte(strconv.Itoa(n)))
	return childPrefix + hex.EncodeToString(h.Sum(nil)[:12])
}

// launchFrame handles a frame of a launch call (the object at obj of the
// frame carries its snapshot): the snapshot is kept from going back and
// gets what the draft dialect said (P4, S6, S8); for an opted-in client
// the call gets its child session (S1, S4): announced before the call's
// first frame, linked from its content, its state and title following
// the snapshot. key is the agent's session and the toolCallId, session
// where the client sees the call, u a session/update's members (nil for
// a permission request, whose content is not the call's: no link).
func (r *rewriter) launchFrame(c *change, key launch.Key, session, tag string, snapRaw []byte, u *[len(updateKeys)][]byte, obj []string) error {
	cl, known := r.calls.Get(key)
	if !known || (tag == "tool_call" && cl.sawToolCall) {
		// A new call, or an id reused after its call (C6): a fresh entry.
		cl = &call{session: session}
		r.calls.Put(key, cl)
	}
	if tag == "tool_call" {
		cl.sawToolCall = true
	}
	if u != nil {
		if st, ok := rawjson.DecodeString(u[updStatus]); ok && st != "" {
			cl.acpStatus = st
		}
	}
	st, _ := rawjson.LookupString(snapRaw, "status")
	status, floor := meta.Status(st), cl.status
	back := status.TakesBack(floor)
	if !r.optedIn && !back && !cl.fold.any() {
		// The snapshot stands as the vendor module wrote it: copied,
		// not decoded (the common case, a client that did not opt in).
		cl.setRaw(snapRaw, status)
	} else {
		s, err := meta.ParseSubagent(snapRaw)
		if err != nil {
			return rewrite.RuleErrorf("M", "reading the snapshot: %w", err)
		}
		if cl.fold.apply(s, floor) {
			c.edits = append(c.edits, rawjson.Edit{Path: subagentPath(obj), Value: s.JSON()})
		}
		cl.setSub(s)
	}
	defer r.calls.Resize(key) // what the call holds changed (P6)
	if !r.optedIn {
		return nil
	}
	r.childOf(c, cl, key, u == nil)
	if u == nil {
		return nil // a permission request shows the call; its content is not the call's
	}
	return r.linkContent(c, cl, u[updContent], u[updStatus] != nil)
}

// subagentPath is the path of the snapshot in the object at obj.
func subagentPath(obj []string) []string {
	return append(append(make([]string, 0, len(obj)+3), obj...), "_meta", metaKey, meta.SubagentMember)
}

// childOf gives an opted-in client the child session of call cl (S1,
// S4): announced on its first frame, unless the agent gives its own; the
// title, description and prompt as they become known; its state after
// each frame.
//
// For AIR (J1) the child's spawn waits until its prompt is known, it
// works (a status past pending, a permission request: asking), or a
// frame of it comes (S5, childFrame): the draft has no patch, so an
// early spawn would name it "Subagent".
func (r *rewriter) childOf(c *change, cl *call, key launch.Key, asking bool) {
	s, err := cl.sub()
	if err != nil {
		r.log.Debug("snapshot unreadable: no child session", "rule", "S4", "err", err)
		return
	}
	if cl.child == "" && !cl.awaitDraft && r.expectsDraft(s.Vendor) {
		// S2: the agent announces its own child (subagent_spawned);
		// exactly one child per subagent, so none is made.
		cl.awaitDraft = true
	}
	if cl.child == "" && cl.awaitDraft && s.Status.Final() {
		// The launch ended and no draft came: this build of the agent
		// has no child sessions of its own. The subagent still gets
		// one, later than S4 would (before the frame that ends the call).
		r.once(slog.LevelInfo, "no draft\x00"+s.Vendor, "the agent sent no child session of its own for a subagent: the proxy made one (--"+r.nativeName(s.Vendor)+"=false makes them from the start)",
			"rule", "S2", "vendor", s.Vendor, "toolCallId", key.ToolCallID)
		cl.awaitDraft = false
	}
	if cl.child == "" && !cl.awaitDraft {
		r.synthesize(c, cl, key, s)
	}
	if cl.child == "" || cl.own {
		return
	}
	if r.air == airNative && !r.airSpawned(cl.child) {
		if !asking && !meta.StatusPending.Before(s.Status) && deref(s.Prompt) == "" {
			return
		}
		r.airSpawn(&c.pre, cl, s)
	}
	if title, desc := r.titleOf(s), deref(s.SubagentType); title != cl.title || desc != cl.description {
		u := subagentUpdate{SessionUpdate: "subagent_update", SessionID: cl.child}
		if title != cl.title {
			u.Title = title
		}
		if desc != cl.description && desc != "" {
			u.Description = desc
		}
		cl.title = title
		if desc != "" {
			cl.description = desc
		}
		if u.Title != "" || u.Description != "" {
			r.send(&c.pre, cl.session, u)
		}
	}
	if p := deref(s.Prompt); !cl.promptSent && p != "" {
		cl.promptSent = true
		r.send(&c.pre, cl.session, promptMessage(cl.session, cl.child, p))
	}
	// A child the turn's answer ended (S4) is not revived by a late
	// frame that still says the call works.
	if st := stateOf(s.Status); st != cl.state && (st.State != "running" || cl.state.State != "idle") {
		cl.state = st
		r.send(&c.post, cl.session, subagentUpdate{SessionUpdate: "subagent_update", SessionID: cl.child, State: &st})
	}
}

// synthesize makes the child session of call cl and announces it before
// the frame (S4): running, titled, described by the subagent type, no
// capabilities (the proxy cannot cancel one child).
func (r *rewriter) synthesize(c *change, cl *call, key launch.Key, s *meta.Subagent) {
	k := cl.session + "\x00" + key.ToolCallID
	n, _ := r.launches.Get(k)
	r.launches.Put(k, n+1)
	cl.child = childID(cl.session, key.ToolCallID, n)
	cl.title, cl.description = r.titleOf(s), deref(s.SubagentType)
	cl.state = childState{State: "running"}
	r.children.Put(cl.child, &child{parent: cl.session, root: r.rootOf(cl.session), agentSession: key.Session,
		toolCallID: key.ToolCallID, synthesized: true})
	st := cl.state
	if r.air == airNative {
		return // AIR's spawn, when there is something to say (childOf)
	}
	r.send(&c.pre, cl.session, subagentUpdate{SessionUpdate: "subagent_update", SessionID: cl.child,
		Title: cl.title, Description: cl.description, State: &st})
}

// rootOf returns the session the client created that sid belongs to:
// sid itself, or the root of the child session sid.
func (r *rewriter) rootOf(sid string) string {
	if ch, ok := r.children.Get(sid); ok && ch.root != "" {
		return ch.root
	}
	return sid
}

// nativeName returns the name of vendor's NativeOption.
func (r *rewriter) nativeName(vendor string) string {
	for _, t := range r.traits {
		if t.vendor == vendor && t.hasNative {
			return t.native.Name
		}
	}
	return ""
}

// expectsDraft reports whether the agent was asked for its own child
// sessions and vendor's agent answers with them (S0, S2).
func (r *rewriter) expectsDraft(vendor string) bool {
	if !r.asked {
		return false
	}
	for _, t := range r.traits {
		if t.vendor == vendor && t.hasNative {
			return true
		}
	}
	return false
}

// titleOf returns a synthesized child's title (S1, S4): the snapshot's
// description, else the vendor's fallback title or, without one, the
// prompt's first line, else "Subagent".
func (r *rewriter) titleOf(s *meta.Subagent) string {
	desc := deref(s.Description)
	for _, t := range r.traits {
		if t.vendor == s.Vendor && t.fallback != "" {
			if desc != "" {
				return desc
			}
			return t.fallback
		}
	}
	if t := meta.TitleText(desc, deref(s.Prompt)); t != "" {
		return t
	}
	return "Subagent"
}

// linkContent links the call's child from a session/update of the call
// (S1, S2, S4): content replaces the whole list on the client, so every
// frame that carries content gets the {"type":"session"} block at its
// end; a frame without content, while the client lacks the link, gets
// the content the client has with the link added (only the link when
// the call had no content yet). When the content the client has is
// unknown (larger than maxKeptContent, or sent before the call was known
// to be a launch), the link waits for a frame with content.
//
// Rule P7: a frame the proxy gives content it had none of also says the
// call's last vendor status, and a call that has finished gets no content from
// the proxy for a client that shows or reprints such updates as new.
func (r *rewriter) linkContent(c *change, cl *call, content []byte, hasStatus bool) error {
	if r.air == airNative {
		return nil // AIR's draft has no link block (J1): the spawn names the call
	}
	if content != nil && rawjson.FirstByte(content) != '[' {
		return nil // not a content array: not the proxy's to touch
	}
	if cl.child == "" {
		cl.keepContent(content)
		return nil
	}
	var arr []byte
	var err error
	switch {
	case content != nil:
		if arr, err = appendLink(content, cl.child); err != nil {
			return rewrite.RuleErrorf("S4", "linking the child session: %w", err)
		}
		if bytes.Equal(arr, content) {
			cl.linked = true
			cl.keepContent(arr)
			return nil
		}
	case cl.linked, r.env.Client.Emit(rewrite.Finished(cl.acpStatus)) != rewrite.EmitAll:
		return nil
	case cl.lastContent != nil:
		if arr, err = appendLink(cl.lastContent, cl.child); err != nil {
			return rewrite.RuleErrorf("S4", "linking the child session: %w", err)
		}
	case cl.sawToolCall && !cl.seenContent:
		arr = appendEmptyLink(cl.child)
	default:
		return nil
	}
	c.edits = append(c.edits, rawjson.Edit{Path: []string{"params", "update", "content"}, Value: arr})
	if content == nil && !hasStatus && cl.acpStatus != "" {
		c.edits = append(c.edits, rawjson.Edit{Path: []string{"params", "update", "status"}, Value: rawjson.Text(cl.acpStatus)})
	}
	cl.linked = true
	cl.keepContent(arr)
	return nil
}

// keepContent records the content the client now has for the call.
func (cl *call) keepContent(content []byte) {
	if content == nil {
		return
	}
	cl.seenContent = true
	cl.lastContent = nil
	if len(content) <= maxKeptContent {
		cl.lastContent = bytes.Clone(content)
	}
}

// sessionLink returns the content block that links a child session.
func sessionLink(child string) []byte {
	out := append([]byte(nil), `{"type":"session","sessionId":`...)
	out = rawjson.AppendString(out, child)
	return append(out, '}')
}

func appendEmptyLink(child string) []byte {
	return append(append([]byte{'['}, sessionLink(child)...), ']')
}

// appendLink returns the content array with child's link block at its
// end, unless the array has it already (in any spelling: the block is
// read as a parser reads it).
func appendLink(content []byte, child string) ([]byte, error) {
	empty, linked := true, false
	err := rawjson.Elements(content, func(el []byte) bool {
		empty = false
		typ, _ := rawjson.LookupString(el, "type")
		sid, ok := rawjson.LookupString(el, "sessionId")
		linked = typ == "session" && ok && sid == child
		return !linked
	})
	if err != nil {
		return nil, err
	}
	if linked {
		return content, nil
	}
	link := sessionLink(child)
	end := bytes.LastIndexByte(content, ']')
	arr := make([]byte, 0, len(content)+len(link)+1)
	arr = append(arr, content[:end]...)
	if !empty {
		arr = append(arr, ',')
	}
	arr = append(arr, link...)
	return append(arr, content[end:]...), nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

package sessions

import (
	"bytes"
	"log/slog"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/rewrite/launch"
	"github.com/acp-normalize/acp-normalize/rewrite/meta"
)

// metaKey is the key of what the proxy adds (rule M).
const metaKey = meta.Key

// paramsKeys and updateKeys are the members of a session/update the
// module reads, in one walk (a tool call's content can be megabytes).
var (
	paramsKeys = [...]string{"sessionId", "update"}
	updateKeys = [...]string{"sessionUpdate", "toolCallId", "content", "_meta", "status"}
)

const (
	updTag = iota
	updToolCallID
	updContent
	updMeta
	updStatus
)

// marks are what the vendor modules put under _meta["acp-normalize"]
// of the object a frame is about: the launch call's snapshot, the
// parent link of a subagent's frame.
type marks struct {
	snapshot []byte // raw JSON object, or nil
	parent   string // parentToolCallId, or ""
}

func readMarks(metaObj []byte) (marks, error) {
	var m marks
	ours, ok := rawjson.Lookup(metaObj, metaKey)
	if !ok || rawjson.FirstByte(ours) != '{' {
		return m, nil
	}
	var v [2][]byte
	if err := rawjson.Pick(ours, []string{meta.SubagentMember, meta.ParentMember}, v[:]); err != nil {
		return m, rewrite.RuleErrorf("M", "_meta[%q]: %w", metaKey, err)
	}
	if rawjson.FirstByte(v[0]) == '{' {
		m.snapshot = v[0]
	}
	if v[1] != nil {
		m.parent, _ = rawjson.DecodeString(v[1])
	}
	return m, nil
}

// change collects what the module does to one frame: edits of the frame
// itself (of base, when set: the frame as an earlier step left it),
// frames to send before it and after it.
type change struct {
	base      []byte
	edits     []rawjson.Edit
	pre, post [][]byte
}

// verdict returns the verdict that writes frame with c's edits, with
// c.pre before it and c.post after it (P2: the first of them takes the
// frame's place, the others follow in order).
func (c *change) verdict(frame []byte) (rewrite.Verdict, error) {
	var v rewrite.Verdict
	if len(c.edits) == 0 && len(c.pre) == 0 && len(c.post) == 0 && c.base == nil {
		return v, nil
	}
	out := frame
	if c.base != nil {
		frame = c.base // compared below with itself: always replaced
		out = c.base
	}
	if len(c.edits) > 0 {
		var err error
		if out, err = rawjson.SetAll(frame, c.edits...); err != nil {
			return v, rewrite.RuleErrorf("S4", "%w", err)
		}
	}
	all := append(append(c.pre, out), c.post...)
	if len(c.pre) > 0 || c.base != nil || !bytes.Equal(out, frame) {
		v.Replace(all[0])
	} // else all[0] is the frame itself, forwarded as it came
	for _, b := range all[1:] {
		v.Send(pipe.Client, b)
	}
	return v, nil
}

// update handles an agent's session/update.
func (r *rewriter) update(f *rewrite.Frame) (rewrite.Verdict, error) {
	var p [len(paramsKeys)][]byte
	var u [len(updateKeys)][]byte
	if rawjson.PickIn(f.Envelope().Params, paramsKeys[:], p[:], "update", updateKeys[:], u[:]) != nil {
		return rewrite.Verdict{}, nil
	}
	sid, ok := rawjson.DecodeString(p[0])
	upd := p[1]
	if !ok || rawjson.FirstByte(upd) != '{' {
		return rewrite.Verdict{}, nil
	}
	tag, _ := rawjson.DecodeString(u[updTag])
	switch tag {
	case "subagent_spawned":
		return r.spawned(sid, upd)
	case "subagent_state_update":
		return r.draftState(sid, upd)
	case "subagent_update":
		return r.nativeUpdate(sid, upd), nil
	}
	if ch := r.hiddenChild(sid); ch != nil {
		return r.hiddenNotification(sid), nil // S7
	}
	switch tag {
	case "session_message", "session_message_chunk":
		if !r.optedIn {
			return r.unasked(tag, sid), nil // P3
		}
		if r.air == airNative {
			return r.airMessage(sid, tag, upd), nil // J1
		}
		return rewrite.Verdict{}, nil
	}
	mk, err := readMarks(u[updMeta])
	if err != nil {
		return rewrite.Verdict{}, err
	}
	var c change
	session := sid
	if mk.parent != "" {
		session = r.childFrame(&c, sid, mk.parent)
	}
	isCall := tag == "tool_call" || tag == "tool_call_update"
	if isCall && mk.snapshot != nil {
		id, _ := rawjson.DecodeString(u[updToolCallID])
		if err := r.launchFrame(&c, launch.Key{Session: sid, ToolCallID: id}, session, tag, mk.snapshot, &u, updatePath); err != nil {
			return rewrite.Verdict{}, err
		}
	}
	if isCall && mk.snapshot != nil && r.air == airMarker {
		r.airMark(&c, f.Raw, updatePath) // J1
	}
	if isCall && (!r.optedIn || r.air == airNative) && u[updContent] != nil {
		if err := stripLinks(&c, u[updContent]); err != nil {
			return rewrite.Verdict{}, err
		}
	}
	if r.zed != nil {
		r.zedUpdate(&c, sid, tag, upd, &u, mk) // Z1-Z4
	}
	return c.verdict(f.Raw)
}

// The objects a frame's marks are on.
var (
	updatePath   = []string{"params", "update"}
	toolCallPath = []string{"params", "toolCall"}
)

// childFrame applies rules S8 and S5 to a frame the vendor linked to the
// launch call parent of the agent's session sid, and returns the session
// the client sees the frame in.
func (r *rewriter) childFrame(c *change, sid, parent string) string {
	pc, ok := r.calls.Get(launch.Key{Session: sid, ToolCallID: parent})
	if !ok || !pc.has() {
		return sid // a launch call the module never saw: nothing is guessed
	}
	if pc.status.Before(meta.StatusRunning) && r.env.Client.Emit(rewrite.Finished(pc.acpStatus)) != rewrite.EmitNothing {
		// S8: the subagent works; the launch call says so right after
		// this frame, with the snapshot alone (no ACP status, P4).
		if s, err := pc.sub(); err == nil {
			running := *s
			running.Status = meta.StatusRunning
			pc.setSub(&running)
			r.calls.Resize(launch.Key{Session: sid, ToolCallID: parent})
			if b, err := r.snapshotUpdate(pc, parent); err == nil {
				c.post = append(c.post, b)
			} else {
				r.log.Error("progress update not built", "rule", "S8", "err", err)
			}
		}
	}
	if !r.optedIn || pc.child == "" || pc.own {
		return sid
	}
	if r.air == airNative && !r.airSpawned(pc.child) {
		// The child's first frame: AIR gets its spawn first (J1).
		if s, err := pc.sub(); err == nil {
			r.airSpawn(&c.pre, pc, s)
		}
	}
	// S5: the frame goes to the child; its parentToolCallId stays.
	c.edits = append(c.edits, rawjson.Edit{Path: []string{"params", "sessionId"}, Value: rawjson.Text(pc.child)})
	return pc.child
}

// stripLinks removes {"type":"session"} blocks from a tool call's content
// for a client that did not opt in (P3: the agent sent them unasked).
func stripLinks(c *change, content []byte) error {
	if kept, removed := withoutLinks(content); removed {
		c.edits = append(c.edits, rawjson.Edit{Path: append(updatePath[:2:2], "content"), Value: kept})
	}
	return nil
}

// withoutLinks returns a tool call's content list without its
// {"type":"session"} blocks, and whether it had any.
func withoutLinks(content []byte) ([]byte, bool) {
	if rawjson.FirstByte(content) != '[' || !bytes.Contains(content, []byte(`"session"`)) {
		return content, false
	}
	var kept [][]byte
	removed := false
	err := rawjson.Elements(content, func(el []byte) bool {
		if t, _ := rawjson.LookupString(el, "type"); t == "session" {
			removed = true
		} else {
			kept = append(kept, el)
		}
		return true
	})
	if err != nil || !removed {
		return content, false
	}
	return append(append([]byte("["), bytes.Join(kept, []byte(","))...), ']'), true
}

// unasked drops a session shape the agent sent a client that did not opt
// in (P3), logging the first of each at info: a known agent quirk the
// proxy handles.
func (r *rewriter) unasked(tag, sid string) rewrite.Verdict {
	r.once(slog.LevelInfo, "unasked\x00"+tag, "subagent session frame dropped: the client did not declare clientCapabilities.subagents",
		"rule", "P3", "sessionUpdate", tag, "sessionId", sid)
	var v rewrite.Verdict
	v.DropFrame()
	return v
}

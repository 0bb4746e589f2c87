package cursor

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"strconv"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/rewrite/meta"
)

// s1 reports whether the proxy announces Cursor subagents as standard
// subagent sessions itself (rule S1).
func (r *rewriter) s1() bool { return r.subagents && !r.opts.NativeSubagents }

// s2 reports whether Cursor's draft subagent shapes are translated (S2).
func (r *rewriter) s2() bool { return r.subagents && r.opts.NativeSubagents }

// fallbackTitle is the child's title when the vendor gave no description.
const fallbackTitle = "Subagent task"

// childSessionID derives a child session id from the parent session, the
// toolCallId and how many subagents that toolCallId launched before. It is
// printable and has no newline, whatever the toolCallId contains.
func childSessionID(parent, toolCallID string, n int) string {
	h := sha256.New()
	h.Write([]byte(parent))
	h.Write([]byte{0})
	h.Write([]byte(toolCallID))
	h.Write([]byte{0})
	h.Write([]byte(strconv.Itoa(n)))
	return "acp-normalize-subagent-" + hex.EncodeToString(h.Sum(nil)[:12])
}

// childID returns the child session linked to the call, or "".
func (c *call) childID() string {
	if c.child != "" {
		return c.child
	}
	if c.nativeShown {
		return c.draftChild
	}
	return ""
}

// textBlock is a text content block.
type textBlock struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// subagentState is a standard subagent state.
type subagentState struct {
	State      string `json:"state"`
	StopReason string `json:"stopReason,omitempty"`
}

// subagentUpdate is a standard subagent_update.
type subagentUpdate struct {
	SessionUpdate string         `json:"sessionUpdate"`
	SessionID     string         `json:"sessionId"`
	Title         string         `json:"title,omitempty"`
	Description   string         `json:"description,omitempty"`
	State         *subagentState `json:"state,omitempty"`
}

// announce returns the frames that must reach the client before the next
// frame of a launch call: the child's first subagent_update, a title
// patch once the description is known, and the prompt as a session_message.
func (r *rewriter) announce(c *call) [][]byte {
	if c.session == "" {
		return nil
	}
	var out [][]byte
	if c.child == "" {
		key := c.session + "\x00" + c.id
		n, _ := r.launch.Get(key)
		r.launch.Put(key, n+1)
		c.child = childSessionID(c.session, c.id, n)
		title := c.snap.description
		if title == "" {
			title = fallbackTitle
		}
		c.childTitled = c.snap.description != ""
		out = r.appendFrame(out, subagentUpdate{SessionUpdate: "subagent_update", SessionID: c.child,
			Title: title, Description: c.snap.subagentType, State: &subagentState{State: "running"}}, c.session)
	} else if !c.childTitled && c.snap.description != "" {
		c.childTitled = true
		out = r.appendFrame(out, subagentUpdate{SessionUpdate: "subagent_update", SessionID: c.child,
			Title: c.snap.description, Description: c.snap.subagentType}, c.session)
	}
	if !c.promptSent && c.snap.prompt != "" {
		c.promptSent = true
		out = r.appendFrame(out, struct {
			SessionUpdate      string      `json:"sessionUpdate"`
			MessageID          string      `json:"messageId"`
			SenderSessionID    string      `json:"senderSessionId"`
			RecipientSessionID string      `json:"recipientSessionId"`
			Content            []textBlock `json:"content"`
		}{"session_message", c.child + "-prompt", c.session, c.child,
			[]textBlock{{"text", c.snap.prompt}}}, c.session)
	}
	return out
}

// finishChild returns the idle update of a foreground child whose launch
// call completed; a background child stays running.
func (r *rewriter) finishChild(c *call) [][]byte {
	if c.child == "" || c.childIdle || c.snap.status != "completed" {
		return nil
	}
	c.childIdle = true
	return r.appendFrame(nil, subagentUpdate{SessionUpdate: "subagent_update", SessionID: c.child,
		State: &subagentState{State: "idle", StopReason: "end_turn"}}, c.session)
}

func (r *rewriter) appendFrame(out [][]byte, update any, sid string) [][]byte {
	b, err := sessionUpdateFrame(sid, update)
	if err != nil {
		r.log.Error("subagent frame not built", "rule", "S1", "err", err)
		return out
	}
	return append(out, b)
}

// appendLinkArray returns the content array with the {"type":"session"}
// block for child at its end, unless it is already there (in any
// spelling: the block is read as a parser reads it, issue 14).
func appendLinkArray(content []byte, child string) ([]byte, error) {
	link := sessionLink(child)
	end := bytes.LastIndexByte(content, ']')
	empty, linked := true, false
	_ = rawjson.Elements(content, func(e []byte) bool {
		empty = false
		typ, _ := rawjson.LookupString(e, "type")
		sid, ok := rawjson.LookupString(e, "sessionId")
		linked = typ == "session" && ok && sid == child
		return !linked
	})
	if linked {
		return content, nil
	}
	arr := make([]byte, 0, len(content)+len(link)+1)
	arr = append(arr, content[:end]...)
	if !empty {
		arr = append(arr, ',')
	}
	arr = append(arr, link...)
	arr = append(arr, content[end:]...)
	return arr, nil
}

// draftSubagent translates Cursor's draft subagent_spawned and
// subagent_state_update into standard subagent_update frames (S2). Without
// S2 they pass through untouched (Cursor only sends them when asked).
func (r *rewriter) draftSubagent(sid string, upd []byte) (rewrite.Verdict, error) {
	var v rewrite.Verdict
	if !r.s2() {
		return v, nil
	}
	v.DropFrame() // draft tags are not in the v1 enum (P3)
	child := strAt(upd, "subagentSessionId")
	var frames [][]byte
	var err error
	if strAt(upd, "sessionUpdate") == "subagent_spawned" {
		frames, err = r.draftSpawned(sid, child, upd)
	} else {
		frames, err = r.draftState(sid, child, upd)
	}
	for _, b := range frames {
		v.Send(pipe.Client, b)
	}
	if err != nil {
		return v, rewrite.RuleErrorf("S2", "%w", err)
	}
	return v, nil
}

// draftSpawned returns the subagent_update announcing child, and the
// frame that links it to its launch call.
func (r *rewriter) draftSpawned(sid, child string, upd []byte) ([][]byte, error) {
	if child == "" || sid == "" {
		r.oddity("S2", "subagent_spawned without child or parent session dropped")
		return nil, nil
	}
	c := r.spawnedCall(sid, child, upd)
	title, desc := fallbackTitle, strAt(upd, "name")
	if c != nil && c.snap.description != "" {
		title = c.snap.description
	}
	r.drafts.Put(child, sid)
	b, err := sessionUpdateFrame(sid, subagentUpdate{SessionUpdate: "subagent_update", SessionID: child,
		Title: title, Description: desc, State: &subagentState{State: "running"}})
	if err != nil || c == nil {
		return nil, err
	}
	link, err := r.spawnLink(c, sid, child)
	if err != nil {
		return [][]byte{b}, err
	}
	return [][]byte{b, link}, nil
}

// spawnedCall returns the launch call a subagent_spawned names (started
// when unknown), with what the spawn says folded in; nil when it names
// none.
func (r *rewriter) spawnedCall(sid, child string, upd []byte) *call {
	tcid := strAt(upd, "_meta", "cursor", "toolCallId")
	c, known := r.calls.Get(tcid)
	if known && (c.done || c.session != sid) {
		// C6: a call that ended, or one of another session, is an
		// earlier call with a reused id; Cursor spawns before it sends
		// the new call's tool_call.
		r.calls.Delete(tcid)
		known = false
	}
	if tcid == "" {
		return nil
	}
	if !known {
		c = &call{session: sid, id: tcid, task: true}
		r.calls.Put(tcid, c)
	}
	c.task, c.draftChild, c.nativeShown = true, child, true
	if m := strAt(upd, "_meta", "cursor", "model"); m != "" && c.snap.model == "" {
		c.snap.model = m
	}
	if p := strAt(upd, "task"); p != "" && c.snap.prompt == "" {
		c.snap.prompt = p
	}
	r.calls.Resize(tcid)
	return c
}

// spawnLink returns the tool_call_update that links child to its launch
// call. Its content replaces the whole list on the client: it repeats the
// vendor's last content (or, when Cursor sent none, the prompt) before
// the link, so nothing Cursor said is lost (P4).
func (r *rewriter) spawnLink(c *call, sid, child string) ([]byte, error) {
	u := toolCallUpdate{SessionUpdate: "tool_call_update", ToolCallID: c.id,
		Meta: meta.Object(meta.SubagentMember, c.snap.subagent().JSON())}
	if content, ok := c.contentWithLink(child); ok {
		u.Content, u.Status = content, c.vendorStatus // P7
		c.shown.content, c.shown.link = true, true
	} else {
		r.log.Debug("session link left for the next frame with content: vendor content not kept", "rule", "S2", "toolCallId", c.id)
	}
	return sessionUpdateFrame(sid, u)
}

// draftState returns the subagent_update of the child's new state.
func (r *rewriter) draftState(sid, child string, upd []byte) ([][]byte, error) {
	if child == "" {
		child = sid
	}
	parent, ok := r.drafts.Get(child)
	if !ok {
		r.oddity("S2", "subagent_state_update for an unknown child dropped")
		return nil, nil
	}
	var st subagentState
	switch strAt(upd, "state") {
	case "completed":
		st = subagentState{State: "idle", StopReason: "end_turn"}
	case "cancelled":
		st = subagentState{State: "idle", StopReason: "cancelled"}
	case "running":
		st = subagentState{State: "running"}
	default:
		return nil, nil
	}
	b, err := sessionUpdateFrame(parent, subagentUpdate{SessionUpdate: "subagent_update", SessionID: child, State: &st})
	if err != nil {
		return nil, err
	}
	return [][]byte{b}, nil
}

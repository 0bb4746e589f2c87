package cursor

import (
	"bytes"
	"encoding/json"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
)

// call is what the proxy knows about one Cursor tool call.
type call struct {
	session string
	id      string
	task    bool // a subagent launch (C2)
	done    bool // completed or failed was seen
	// vendorStatus is the last ACP status Cursor sent for the call: the
	// frames the proxy adds for it say it too (P7), so that none reads
	// as the call running again.
	vendorStatus string
	// sawToolCall: a tool_call frame of this call was seen. A later
	// tool_call with the same id is a new call (C6); only an entry made
	// by S2's subagent_spawned before the call's tool_call is kept.
	sawToolCall bool

	shown  shown      // what the client has of the call
	vendor vendorSaid // what Cursor sent of it
	// lastContent is the vendor's last content array (nil when it was
	// larger than maxKeptContent or no array), so that a frame the proxy
	// adds to link a child session can repeat it instead of replacing it
	// (content replaces the whole list; P4).
	lastContent []byte

	snap snapshot

	// S1
	child       string // the child session announced for this launch
	childTitled bool   // the child's title is the description
	childIdle   bool   // the child was reported idle
	promptSent  bool   // the prompt went to the child as a session_message
	draftChild  string // S2: Cursor's own subagentSessionId
	nativeShown bool   // S2: a subagent_update was sent for draftChild
}

// shown is what the client has been shown of a call, by Cursor or by the
// proxy: each is added at most once, and never taken back (P4).
type shown struct {
	name    bool // a name (the vendor's or ours)
	title   bool // a title that is not the placeholder
	content bool // content
	link    bool // the child session link in content (S1, S2)
}

// vendorSaid is what Cursor itself sent for a call.
type vendorSaid struct {
	name    bool // a name
	content bool // content that is not empty
}

// bytes returns the bytes c holds (P6).
func (c *call) bytes() int64 {
	return int64(64+len(c.session)+len(c.id)+len(c.lastContent)+len(c.child)+len(c.draftChild)) + c.snap.bytes()
}

// maxKeptContent bounds the vendor content kept per call (P6).
const maxKeptContent = 64 << 10

// contentWithLink returns the content of a frame the proxy adds to link
// child to the call: the vendor's last content plus the link when the
// vendor sent content, else the prompt (when known) and the link. ok is
// false when the vendor's content was not kept (too large or no array):
// the link then waits for the vendor's next frame with content.
func (c *call) contentWithLink(child string) (content json.RawMessage, ok bool) {
	if !c.vendor.content {
		return promptContent(c.snap.prompt, &child), true
	}
	if c.lastContent == nil {
		return nil, false
	}
	b, err := appendLinkArray(c.lastContent, child)
	if err != nil {
		return nil, false
	}
	return b, true
}

// lastStatus returns the last ACP status Cursor sent for the tool call
// id, or "" when none is known (P7).
func (r *rewriter) lastStatus(id string) string {
	if c, ok := r.calls.Get(id); ok {
		return c.vendorStatus
	}
	return ""
}

// startOver forgets what earlier frames (S2's spawn link) showed the
// client: it learns of the call from this tool_call.
func (c *call) startOver() {
	c.shown = shown{}
	c.vendor.content, c.lastContent = false, nil
}

// observe folds one tool call frame (its update's members) into the call:
// the snapshot from rawInput and rawOutput, the content the vendor sent,
// and the status.
func (c *call) observe(u *updateMembers) {
	if in := u[updRawInput]; rawjson.FirstByte(in) == '{' {
		c.snap.observeInput(in)
	}
	if out := u[updRawOutput]; rawjson.FirstByte(out) == '{' {
		c.snap.observeOutput(out)
	}
	if v := u[updContent]; notNull(v) {
		if vendorContent(v) {
			c.shown.content, c.vendor.content = true, true
		}
		if c.vendor.content {
			c.lastContent = nil
			if rawjson.FirstByte(v) == '[' && len(v) <= maxKeptContent {
				c.lastContent = bytes.Clone(v)
			}
		}
	}
	if st := str(u[updStatus]); st != "" {
		c.vendorStatus = st
		c.observeStatus(st)
	}
}

// observeStatus maps an ACP tool call status to the snapshot's, which
// only moves forward (C5: a completed background launch is launched).
func (c *call) observeStatus(status string) {
	s := &c.snap
	switch status {
	case "pending":
		if !c.done && s.status == "" {
			s.status = statusPending
		}
	case "in_progress":
		if !c.done {
			s.status = statusRunning
		}
	case "completed":
		c.done = true
		s.status = statusCompleted
	case "failed":
		c.done = true
		s.status = statusFailed
	}
	c.markLaunched()
}

// markLaunched applies C5: a background launch that completed is launched.
func (c *call) markLaunched() {
	s := &c.snap
	if c.done && s.status == statusCompleted && s.background != nil && *s.background {
		s.status = statusLaunched
	}
}

// vendorContent reports whether a tool call frame's raw content member
// (nil when absent) carries content: neither null nor an empty array.
func vendorContent(v []byte) bool {
	if !notNull(v) {
		return false
	}
	if rawjson.FirstByte(v) != '[' {
		return true
	}
	any := false
	_ = rawjson.Elements(v, func([]byte) bool { any = true; return false })
	return any
}

// wantTitle returns the title to set on a frame of a launch call, or "".
func (c *call) wantTitle(title string, hasTitle bool) string {
	if hasTitle && !isPlaceholder(title) {
		c.shown.title = true
		return ""
	}
	if c.snap.description == "" {
		return ""
	}
	want := "Task: " + c.snap.description
	if hasTitle || !c.shown.title {
		c.shown.title = true
		return want
	}
	return ""
}

// isPlaceholder reports whether a Cursor task title says nothing.
func isPlaceholder(title string) bool {
	return title == "Task: Subagent task" || title == "Task" || title == ""
}

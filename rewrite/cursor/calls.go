package cursor

import (
	"github.com/acp-normalize/acp-normalize/internal/rawjson"
	"github.com/acp-normalize/acp-normalize/rewrite/meta"
)

// call is what the proxy knows about one Cursor tool call.
type call struct {
	session string
	id      string
	task    bool // a subagent launch (C2)
	// vendorStatus is the last ACP status Cursor sent for the call: the
	// frames the proxy adds for it say it too (P7), so that none reads
	// as the call running again.
	vendorStatus string
	// sawToolCall: a tool_call frame of this call was seen. A later
	// tool_call with the same id is a new call (C6); an entry made by a
	// cursor/task before the call's tool_call is kept.
	sawToolCall bool

	shown  shown      // what the client has of the call
	vendor vendorSaid // what Cursor sent of it

	snap snapshot
}

// shown is what the client has been shown of a call, by Cursor or by the
// proxy: each is added at most once, and never taken back (P4).
type shown struct {
	name    bool // a name (the vendor's or ours)
	title   bool // a title that is not the placeholder
	content bool // content
}

// vendorSaid is what Cursor itself sent for a call.
type vendorSaid struct {
	name    bool // a name
	content bool // content that is not empty
}

// bytes returns the bytes c holds (P6).
func (c *call) bytes() int64 {
	return int64(64+len(c.session)+len(c.id)) + c.snap.bytes()
}

// lastStatus returns the last ACP status Cursor sent for the tool call
// id, or "" when none is known (P7).
func (r *rewriter) lastStatus(id string) string {
	if c, ok := r.calls.Get(id); ok {
		return c.vendorStatus
	}
	return ""
}

// startOver forgets what earlier frames showed the client: it learns of
// the call from this tool_call.
func (c *call) startOver() {
	c.shown = shown{}
	c.vendor.content = false
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
	if v := u[updContent]; vendorContent(v) {
		c.shown.content, c.vendor.content = true, true
	}
	if st := str(u[updStatus]); st != "" {
		c.vendorStatus = st
		c.observeStatus(st)
	}
}

// observeStatus maps an ACP tool call status to the snapshot's, which
// only moves forward; the call's end is the last one Cursor sent, and a
// completed background launch is launched (C5).
func (c *call) observeStatus(status string) {
	s := &c.snap
	if to := meta.FromToolCall(status); to.Final() {
		s.status = to
	} else {
		s.status.Advance(to)
	}
	c.markLaunched()
}

// markLaunched applies C5: a background launch that completed is launched.
func (c *call) markLaunched() {
	c.snap.status = c.snap.status.Detach(c.snap.background)
}

// vendorContent reports whether a tool call frame's raw content member
// (nil when absent) carries content: neither null nor an empty array.
func vendorContent(v []byte) bool {
	if !notNull(v) {
		return false
	}
	i := rawjson.SkipSpace(v, 0)
	if i >= len(v) || v[i] != '[' {
		return true
	}
	// Not empty: something other than ']' follows the '['. Looked at
	// without walking the first element (a file read's megabytes): the
	// frame was checked whole before any module saw it (P5).
	i = rawjson.SkipSpace(v, i+1)
	return i < len(v) && v[i] != ']'
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

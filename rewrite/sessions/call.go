package sessions

import (
	"bytes"

	"github.com/acp-normalize/acp-normalize/rewrite/meta"
)

// call is what the module knows of one subagent launch call.
type call struct {
	// session is where the client sees the call: the agent's session,
	// or the synthesized child it was moved to (a nested launch, S5).
	session string
	// raw is the snapshot the client was last sent (a copy; nil until
	// a frame of the call carried one), status its status, and snap raw
	// decoded, when something needed its fields (nil until then: a
	// launch frame for a client that did not opt in is only copied).
	raw    []byte
	status meta.Status
	snap   *meta.Subagent
	// fold is what the draft dialect said of the subagent (S6).
	fold fold
	// acpStatus is the last ACP status the vendor's frames of the call
	// said: a frame that gets content from the proxy says it too (P7).
	acpStatus string
	// sawToolCall: a tool_call frame started the call (a later one with
	// the same id is a new call; an entry a draft spawn made before its
	// tool_call is kept for it).
	sawToolCall bool

	// child is the call's child session: synthesized (S1, S4) or the
	// agent's own (own, S2); "" while there is none.
	child string
	own   bool
	// awaitDraft: the agent was asked for its own child sessions and
	// answers in the draft dialect: none is synthesized (S4).
	awaitDraft bool
	// What the client was sent of the synthesized child: its title and
	// description, the prompt, its state (S4).
	title, description string
	promptSent         bool
	state              childState
	// linked: the client has the {"type":"session"} link in the call's
	// content; lastContent is the content the client last got for the
	// call (nil when unknown or larger than maxKeptContent), for a frame
	// that adds the link and must not lose it (content replaces the
	// whole list).
	linked      bool
	lastContent []byte
	seenContent bool
}

// fold is what the draft dialect said of a launch call's subagent: it
// fills the snapshot where the vendor's frames left a field out (S6).
type fold struct {
	childSessionID, agentID, model string
	status                         meta.Status
}

// maxKeptContent bounds the content kept per call (P6).
const maxKeptContent = 64 << 10

// bytes returns the bytes c holds (P6).
func (c *call) bytes() int64 {
	n := int64(96 + len(c.session) + len(c.child) + len(c.title) + len(c.description) + len(c.lastContent) +
		len(c.fold.childSessionID) + len(c.fold.agentID) + len(c.fold.model))
	n += int64(len(c.raw))
	if c.snap != nil {
		n += c.snap.Bytes()
	}
	return n
}

// has reports whether the client was sent a snapshot of the call.
func (c *call) has() bool { return c.raw != nil }

// sub returns the call's snapshot, decoded.
func (c *call) sub() (*meta.Subagent, error) {
	if c.snap == nil {
		s, err := meta.ParseSubagent(c.raw)
		if err != nil {
			return nil, err
		}
		c.snap = s
	}
	return c.snap, nil
}

// setSub makes s the snapshot the client has.
func (c *call) setSub(s *meta.Subagent) {
	c.snap, c.raw, c.status = s, s.JSON(), s.Status
}

// setRaw makes raw (a frame's snapshot, copied) the snapshot the client
// has, with its status st.
func (c *call) setRaw(raw []byte, st meta.Status) {
	c.snap, c.raw, c.status = nil, bytes.Clone(raw), st
}

// child is a child session the module knows of.
type child struct {
	// parent is the session the child belongs to, as the client sees it;
	// root the first of its ancestors the client created (P6: the child
	// goes with it).
	parent, root string
	// agentSession is the agent's session of the launch call.
	agentSession string
	toolCallID   string
	// synthesized: the proxy made it (S1, S4); else it is the agent's
	// (draft or native).
	synthesized bool
	// hidden: the client did not opt in and was never told of it (S7).
	hidden bool
	// For JetBrains AIR (J1): the client got the child's
	// subagent_spawned, its prompt, its subagent_state_update; airHeard:
	// the parent's first message to it went by (every later one is
	// the child's user message).
	airSpawned, airPrompt, airEnded, airHeard bool
}

func (c *child) bytes() int64 {
	return int64(48 + len(c.parent) + len(c.root) + len(c.agentSession) + len(c.toolCallID))
}

// childState is a standard subagent state (S4's mapping of the
// snapshot's status).
type childState struct {
	State      string `json:"state"`
	StopReason string `json:"stopReason,omitempty"`
}

// stateOf maps a snapshot status to the child's state (S4): every status
// before an end is running (a background launch runs on); completed is
// idle with end_turn, cancelled idle with cancelled, failed idle.
func stateOf(s meta.Status) childState {
	switch s {
	case meta.StatusCompleted:
		return childState{"idle", "end_turn"}
	case meta.StatusCancelled:
		return childState{"idle", "cancelled"}
	case meta.StatusFailed:
		return childState{State: "idle"}
	}
	return childState{State: "running"}
}

// any reports whether the draft dialect said anything of the subagent.
func (fd *fold) any() bool {
	return fd.childSessionID != "" || fd.agentID != "" || fd.model != "" || fd.status != ""
}

// apply fills in what fold knows and s lacks, moves s's status to the
// fold's when that is further along, and keeps it from going back from
// floor, the status the client was last sent (P4, S8): never to a lower
// rank, and an end once sent stays. It reports whether s changed.
func (fd *fold) apply(s *meta.Subagent, floor meta.Status) bool {
	changed := false
	set := func(dst **string, v string) {
		if *dst == nil && v != "" {
			*dst = meta.Text(v)
			changed = true
		}
	}
	set(&s.ChildSessionID, fd.childSessionID)
	set(&s.AgentID, fd.agentID)
	set(&s.Model, fd.model)
	changed = s.Status.Follow(fd.status) || changed
	return s.Status.Keep(floor) || changed
}

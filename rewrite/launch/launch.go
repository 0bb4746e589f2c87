package launch

import (
	"fmt"
	"log/slog"
	"strings"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/rewrite/meta"
	"github.com/acp-normalize/acp-normalize/rewrite/table"
)

// Key identifies a launch call (rule V2: per sessionId and toolCallId).
type Key struct {
	Session, ToolCallID string
}

// Call is one launch call's state.
type Call struct {
	// Snap is the rule-M snapshot, accumulated from every frame.
	Snap meta.Subagent
	// bare is the vendor's title that is only the tool's name ("Agent").
	bare string
	// bareShown: the client was shown the bare title; titled: it was
	// shown a better one since (the vendor's or ours).
	bareShown, titled bool
	// vendorStatus is the last ACP status the vendor sent for the call;
	// a frame the proxy gives a title says it too (P7).
	vendorStatus string
	client       *rewrite.Client
}

// VendorStatus returns the last ACP status the vendor sent for the call.
func (c *Call) VendorStatus() string { return c.vendorStatus }

// Final reports whether the call reached a final status.
func (c *Call) Final() bool { return c.Snap.Status.Final() }

// Finish ends a detached (launched) call with s when the vendor reports
// its subagent's end outside the call (V5), and reports whether the
// status changed.
func (c *Call) Finish(s meta.Status) bool {
	if !c.Snap.Status.Detached() {
		return false
	}
	return c.Snap.Status.Follow(s)
}

// Calls is a connection's launch calls.
type Calls struct {
	t      *table.Table[Key, *Call]
	log    *slog.Logger
	client *rewrite.Client // the connection's client (P7)
}

// NewCalls returns an empty table of launch calls for env's connection.
func NewCalls(env rewrite.Env) *Calls {
	return &Calls{
		t:      NewTable(env, "launch calls", func(c *Call) int64 { return int64(len(c.bare)) + c.Snap.Bytes() }),
		log:    env.Log(),
		client: env.Client,
	}
}

// Get returns the call k, if known.
func (cs *Calls) Get(k Key) (*Call, bool) { return cs.t.Get(k) }

// Start begins a new call k of vendor's tool toolName, replacing any
// earlier one under the same key; bare is the vendor title that is only
// the tool's name (compared without case).
func (cs *Calls) Start(k Key, vendor, toolName, bare string) *Call {
	c := &Call{Snap: meta.Subagent{Vendor: vendor, ToolName: toolName}, bare: bare, client: cs.client}
	cs.t.Put(k, c)
	return c
}

// Route is the Rewrite of a module whose state is cs (see the function
// Route).
func (cs *Calls) Route(f *rewrite.Frame, id *rewrite.Identity, update func(*rewrite.Frame) (rewrite.Verdict, error)) (rewrite.Verdict, error) {
	return Route(f, id, cs.t, update)
}

// Each calls fn for each call, oldest first, until it returns false.
func (cs *Calls) Each(fn func(Key, *Call) bool) { cs.t.Each(fn) }

// Changed recounts the bytes of call k after its snapshot grew (P6).
func (cs *Calls) Changed(k Key) { cs.t.Resize(k) }

// DropClosed forgets the calls of the session a client's session/close
// ends (P6), and returns that session's id; false for any other frame.
func (cs *Calls) DropClosed(f *rewrite.Frame) (string, bool) {
	sid, ok := rewrite.ClosedSession(f)
	if !ok {
		return "", false
	}
	if n := cs.t.DropSession(sid); n > 0 {
		cs.log.Debug("session closed: launch call state dropped", "rule", "P6", "sessionId", sid, "calls", n)
	}
	return sid, true
}

// Annotate returns frame with the call's snapshot in the _meta of the
// object at obj (params.update, params.toolCall), and with rule V3
// applied to that object's title: a bare title becomes "Subagent:
// <description>" once the text is known, and a frame without a title
// gets one when the client was last shown the bare title. A vendor frame
// that has no status and gets a title here also gets the call's last
// vendor status (P7), so that no client reads it as the call running
// again.
func (c *Call) Annotate(frame []byte, obj ...string) ([]byte, error) {
	st, hasStatus := rawjson.LookupString(frame, append(obj, "status")...)
	if st != "" {
		c.vendorStatus = st
	}
	snap, err := meta.SubagentEdit(frame, &c.Snap, obj...)
	if err != nil {
		return nil, err
	}
	edits := make([]rawjson.Edit, 0, 3)
	title, hasTitle := rawjson.LookupString(frame, append(obj, "title")...)
	if better := c.title(title, hasTitle); better != "" {
		edits = append(edits, rawjson.Edit{Path: path(obj, "title"), Value: rawjson.Text(better)})
		if !hasStatus && c.vendorStatus != "" {
			// P7: a title on a status-less frame says the status too.
			edits = append(edits, rawjson.Edit{Path: path(obj, "status"), Value: rawjson.Text(c.vendorStatus)})
		}
	}
	out, err := rawjson.SetAll(frame, append(edits, snap)...)
	if err != nil {
		return nil, fmt.Errorf("adding the snapshot and title (V3): %w", err)
	}
	return out, nil
}

// title returns the V3 title a frame of the call gets, given the title
// it carries (hasTitle), or "" when it keeps its own: a bare title
// becomes "Subagent: <description>" once the text is known, and a frame
// without a title gets one when the client was last shown the bare
// title.
func (c *Call) title(title string, hasTitle bool) string {
	better := meta.Title(deref(c.Snap.Description), deref(c.Snap.Prompt))
	switch {
	case hasTitle && !strings.EqualFold(title, c.bare):
		c.titled = true
		return ""
	case hasTitle && better == "":
		c.bareShown, c.titled = true, false
		return ""
	case !hasTitle && (!c.bareShown || c.titled || better == ""):
		return ""
	}
	c.titled = true
	return better
}

// path returns obj's path extended by key, in a new slice.
func path(obj []string, key string) []string {
	return append(append(make([]string, 0, len(obj)+1), obj...), key)
}

// UpdateFrame returns the session/update that carries the call's snapshot
// alone, for a result that arrived outside the call (V5): no status, so
// nothing the vendor said is overridden (P4), unless V3 gives it a title,
// which then comes with the call's last vendor status (P7). rawSession
// is the session id's JSON as the vendor wrote it. It returns nil when
// the client must get no update for the call any more (P7: a client that
// shows updates of finished calls as new entries); for one that reprints
// finished calls the snapshot comes without a title.
func (c *Call) UpdateFrame(rawSession []byte, toolCallID string) ([]byte, error) {
	emit := c.client.Emit(rewrite.Finished(c.vendorStatus))
	if emit == rewrite.EmitNothing {
		return nil, nil
	}
	b := make([]byte, 0, 256+c.Snap.Bytes())
	b = append(b, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":`...)
	b = append(b, rawSession...)
	b = append(b, `,"update":{"sessionUpdate":"tool_call_update","toolCallId":`...)
	b = rawjson.AppendString(b, toolCallID)
	b = append(b, '}', '}', '}')
	if emit == rewrite.EmitSnapshotOnly {
		return meta.SetSubagent(b, &c.Snap, "params", "update")
	}
	return c.Annotate(b, "params", "update")
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// DropKey forgets call k (its id now names another tool call).
func (cs *Calls) DropKey(k Key) { cs.t.Delete(k) }

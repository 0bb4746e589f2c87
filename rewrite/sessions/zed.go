package sessions

import (
	"bytes"
	"encoding/hex"
	"log/slog"
	"slices"
	"strings"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/rewrite/launch"
	"github.com/acp-normalize/acp-normalize/rewrite/table"
)

// Rules Z1-Z4: Zed's subagent cards and child threads, for a client that
// reads Zed's own key (rewrite.KnownClient.SubagentCards) and did not opt in to
// Subagent Sessions. They live in the sessions module, not a module of
// their own, for two reasons: S5 answers every client request naming a
// synthesized child -32602 before any later module would see Zed's
// session/load of it, and a module of its own would change the module
// list every client's initialize result advertises (rule M).
//
// What Zed does with the key (zed-industries/zed, crates/agent_ui,
// conversation_view/thread_view): render_any_tool_call hands a call with
// subagent_session_info to render_subagent_tool_call, which looks the
// child's thread up among the loaded ones and calls render_subagent_card.
// Without a loaded thread that card draws the header only (status icon,
// the call's title) and nothing of the call's content: the content,
// expandable content (render_subagent_expanded_content, the child's last
// 8 entries) and the error callout all hang off the loaded thread. A
// plain card (render_tool_call) shows the content. Zed loads a child only
// when it builds a thread's view (a thread reopened from history), so a
// live call with the key would show a live user less than today (P7):
// the key goes only on launch calls replayed by a session/load of their
// session, which Zed follows with a load of each child the proxy serves.

// Option names and values (rules Z1, Z4).
const (
	ZedSubagentsOption     = "zed-subagents"
	SubagentProgressOption = "subagent-progress"
	// auto: the known-client table's choice (KnownClient.SubagentCards,
	// LiveContent); on: every client that did not opt in; off: none.
	choiceAuto, choiceOn, choiceOff = "auto", "on", "off"
)

// Zed's key (crates/acp_thread: SUBAGENT_SESSION_INFO_META_KEY,
// TOOL_NAME_META_KEY).
const (
	zedInfoKey     = "subagent_session_info"
	zedToolNameKey = "tool_name"
)

// Bounds of what is kept for child threads (P6): per child, and for all
// the children of a connection together (past it the oldest child goes
// first), inside the connection's byte budget.
const (
	maxKeptPerChild = 4 << 20
	maxKeptChildren = 16 << 20
)

// zedState is what rules Z1-Z4 keep for a connection.
type zedState struct {
	key      bool // Z1-Z3: the client reads Zed's key
	progress bool // Z4
	loadOK   bool // the agent advertised loadSession: true
	// replaying: sessions whose session/load the client sent and the
	// agent has not answered: their frames are a replay (Z3). loads are
	// those loads' ids (pipe.IDKey: the agent may spell an id its own
	// way), whose answers end the replays.
	replaying      *table.Table[string, struct{}]
	loads          *table.Table[string, string]
	watchingAnswer bool
	// counts: launches per "session\x00toolCallId" since the session's
	// last load, for the synthesized child id (S4's derivation).
	counts *table.Table[string, int]
	calls  *table.Table[launch.Key, *zcall]
	kids   *table.Table[string, *zchild] // child threads, by C
}

// zcall is what Z1-Z4 know of one launch call.
type zcall struct {
	n           int    // launches of the toolCallId before it (childID's n)
	child       string // C, once chosen
	sawToolCall bool
	// agentKey: the agent gave the call Zed's key itself, naming a child
	// of its own: the key, the child's load and its frames are the
	// agent's (Z1, Z2).
	agentKey bool
	// made: a child thread was made for the call (since the session's
	// last load); once P6 dropped it, later frames start no headless one.
	made bool
	// vendorContent is the content the vendor last gave the call (nil
	// when none or unknown: larger than maxKeptContent).
	vendorContent []byte
	contentKnown  bool
	progress      progress
	sentProgress  string
}

func (z *zcall) bytes() int64 {
	return int64(64+len(z.child)+len(z.vendorContent)+len(z.sentProgress)) + z.progress.bytes()
}

// zchild is a child thread the proxy serves (Z2).
type zchild struct {
	parent, toolCallID string
	prompt, result     string
	frames             [][]byte // the session/update "update" objects linked to the call, in order
	keptBytes          int64
	full               bool // maxKeptPerChild reached: later frames not kept
	loaded             bool // the client loaded it: live frames go to it too
	replayed           bool // its frames were replaced by the current replay
}

func (k *zchild) bytes() int64 {
	return int64(96+len(k.parent)+len(k.toolCallID)+len(k.prompt)+len(k.result)) + k.keptBytes
}

// zedSetup decides, at the client's initialize, whether Z1-Z4 apply.
func (r *rewriter) zedSetup() {
	r.zed = nil
	if r.optedIn {
		return // the standard shape is the client's (S0-S8)
	}
	row, _ := rewrite.KnownClientNamed(r.env.Client.Name())
	choose := func(opt string, table bool) bool {
		switch v := r.env.Settings.String(opt); v {
		case choiceOn:
			return true
		case choiceOff:
			return false
		case "", choiceAuto:
		default:
			r.once(slog.LevelWarn, "bad "+opt, "unknown --"+opt+" value: auto used (give auto, on or off)", "rule", "Z1", "value", v)
		}
		return table
	}
	key, progress := choose(ZedSubagentsOption, row.SubagentCards), choose(SubagentProgressOption, row.LiveContent)
	if !key && !progress {
		return
	}
	keyLen := func(k string) int64 { return int64(len(k)) }
	z := &zedState{key: key, progress: progress,
		replaying: rewrite.NewTable(r.env, table.Config[string, struct{}]{Name: "sessions replayed",
			Size: func(k string, _ struct{}) int64 { return keyLen(k) }, Session: func(k string, _ struct{}) string { return k }}),
		loads: rewrite.NewTable(r.env, table.Config[string, string]{Name: "session loads",
			Size: func(k, v string) int64 { return keyLen(k) + keyLen(v) }, Session: func(_, v string) string { return v }}),
		counts: rewrite.NewTable(r.env, table.Config[string, int]{Name: "launches since load",
			Size: func(k string, _ int) int64 { return keyLen(k) }}),
		calls: launch.NewTable(r.env, "launch calls (Z1-Z4)", (*zcall).bytes),
		kids: rewrite.NewTable(r.env, table.Config[string, *zchild]{Name: "child threads",
			Size:     func(k string, c *zchild) int64 { return keyLen(k) + c.bytes() },
			Session:  func(_ string, c *zchild) string { return c.parent },
			Describe: func(k string, c *zchild) []any { return []any{"childSessionId", k, "sessionId", c.parent} }}),
	}
	r.zed = z
	if key {
		// Seen from now on, for this client only: no other client's
		// frames are decoded for them (P1).
		r.env.Watch(`"loadSession"`)
		r.env.Watch(`"session/load"`)
	}
}

// zedAgentInit reads the agent's initialize answer: Zed loads a child
// only from an agent that advertised loadSession: true (Z1).
func (r *rewriter) zedAgentInit(f *rewrite.Frame) {
	if r.zed == nil {
		return
	}
	r.env.Unwatch(`"loadSession"`) // said once per connection
	v, _ := f.Lookup("result", "agentCapabilities", "loadSession")
	r.zed.loadOK = string(v) == "true"
	if r.zed.key && !r.zed.loadOK {
		r.once(slog.LevelInfo, "no loadSession", "the agent does not advertise loadSession: no subagent cards for Zed (it could not load a child)", "rule", "Z1")
	}
}

// keyOn reports whether launch calls get Zed's key on this connection.
func (z *zedState) keyOn() bool { return z != nil && z.key && z.loadOK }

// zedClient handles a client request for rules Z2 and Z3: a session/load
// of a child the proxy serves is answered by the proxy (true); a load of
// any other session starts its replay; session/close of a served child
// is answered; any other request or notification on one is S5's
// read-only answer. It runs before S5.
func (r *rewriter) zedClient(f *rewrite.Frame, env *pipe.Envelope, sid string) (rewrite.Verdict, bool) {
	z := r.zed
	if !z.keyOn() || sid == "" {
		return rewrite.Verdict{}, false
	}
	if env.Kind != pipe.Request || !env.MethodIs("session/load") && !env.MethodIs("session/close") {
		if _, held := z.kids.Get(sid); held {
			// The agent has no such session: read-only, as S5 says.
			return r.readOnly(f, string(env.Method), sid), true
		}
		return rewrite.Verdict{}, false
	}
	switch {
	case env.MethodIs("session/load"):
		if r.servedChild(sid) {
			return r.zedLoadChild(f, sid), true
		}
		r.zedReplay(sid, string(f.ID()))
	case env.MethodIs("session/close"):
		if r.servedChild(sid) {
			// Released, not forgotten: Zed closes a child whose view it
			// drops and may load it again while the parent is open; its
			// thread goes with the parent (P6). Until then its frames and
			// requests stay on the parent, where the client holds them.
			if k, ok := z.kids.Get(sid); ok {
				k.loaded = false
			}
			var v rewrite.Verdict
			v.DropFrame()
			if b, err := rewrite.Result(f.ID(), []byte("{}")); err == nil {
				v.Send(pipe.Client, b)
			}
			return v, true
		}
	}
	return rewrite.Verdict{}, false
}

// answerTriggers select the agent's answers while a load is pending.
var answerTriggers = [...]string{`"result"`, `"error"`}

// zedAnswer reads an agent's response: the answer to a session/load
// ends that session's replay (Z3); from then on its frames are live.
func (r *rewriter) zedAnswer(f *rewrite.Frame) {
	z := r.zed
	if z == nil || z.loads.Len() == 0 {
		return
	}
	id := pipe.IDKey(string(f.ID())) // the one id equality (F6)
	sid, ok := z.loads.Get(id)
	if !ok {
		return
	}
	z.loads.Delete(id)
	again := false
	z.loads.Each(func(_ string, s string) bool { again = s == sid; return !again })
	if again {
		// Another load of the session is pending (two panes, a retry):
		// its replay follows this answer, counted afresh (the same C).
		r.zedReset(sid)
	} else {
		z.replaying.Delete(sid)
	}
	if z.loads.Len() == 0 && z.watchingAnswer {
		for _, t := range answerTriggers {
			r.env.Unwatch(t)
		}
		z.watchingAnswer = false
	}
}

// servedChild reports whether sid is a child thread the proxy answers
// for: one it holds, one it synthesized (held or forgotten), or one the
// proxy named C (the agent's own id) that it still holds.
func (r *rewriter) servedChild(sid string) bool {
	if _, ok := r.zed.kids.Get(sid); ok {
		return true
	}
	return childShaped(sid)
}

// childShaped reports whether sid is shaped like the ids childID makes.
// For a client that reads Zed's key, a load of one the proxy no longer
// holds is a child it forgot (P6), which gets an empty thread (Z2); no
// agent makes such ids.
func childShaped(sid string) bool {
	rest, ok := strings.CutPrefix(sid, childPrefix)
	if !ok || len(rest) != 24 {
		return false
	}
	_, err := hex.DecodeString(rest)
	return err == nil
}

// zedReplay starts the replay of session sid (Z3): its launch calls are
// counted afresh (the same C as before), its children's frames are
// replaced by those the replay brings, and they are to be loaded again.
func (r *rewriter) zedReplay(sid, id string) {
	z := r.zed
	z.replaying.Put(sid, struct{}{})
	z.loads.Put(pipe.IDKey(id), sid)
	if !z.watchingAnswer {
		// Only while a load is pending: the answers of the rest of the
		// connection are never decoded for it (P1).
		z.watchingAnswer = true
		for _, t := range answerTriggers {
			z.watchingAnswer = r.env.Watch(t) && z.watchingAnswer
		}
	}
	r.zedReset(sid)
}

// zedReset starts a replay of session sid (Z3): launches counted afresh,
// the children's frames to be replaced by the replay's, and loaded again.
func (r *rewriter) zedReset(sid string) {
	z := r.zed
	prefix := sid + "\x00"
	z.counts.DeleteFunc(func(k string, _ int) bool { return strings.HasPrefix(k, prefix) })
	z.calls.DropSession(sid)
	z.kids.Each(func(_ string, k *zchild) bool {
		if k.parent == sid {
			k.replayed, k.loaded = false, false
		}
		return true
	})
}

func (z *zedState) replayingSession(sid string) bool {
	_, ok := z.replaying.Get(sid)
	return ok
}

// zedLoadChild answers Zed's session/load of child C (Z2): the child's
// history as session/update notifications on C (the launch prompt as the
// user's message, the frames the vendor linked to the launch call in
// order, the subagent's result as its message when none of those was
// one), then {}. A child the proxy no longer holds gets an empty
// history: never an error that would break the parent's view. From now
// on the child's live frames go to C too.
func (r *rewriter) zedLoadChild(f *rewrite.Frame, sid string) rewrite.Verdict {
	var v rewrite.Verdict
	v.DropFrame()
	k, ok := r.zed.kids.Get(sid)
	if !ok {
		r.once(slog.LevelInfo, "forgotten child", "a child thread the proxy no longer holds was loaded: empty history", "rule", "Z2", "sessionId", sid)
	}
	if ok {
		k.loaded = true
		var frames [][]byte
		if k.prompt != "" {
			r.send(&frames, sid, messageChunk{SessionUpdate: "user_message_chunk", Content: textBlock{"text", k.prompt}})
		}
		said := false
		for _, u := range k.frames {
			if tag, _ := rawjson.LookupString(u, "sessionUpdate"); tag == "agent_message_chunk" {
				said = true
			}
			if b, err := sessionUpdateFrame(sid, rawUpdate(u)); err == nil {
				frames = append(frames, b)
			}
		}
		// The call's content as the result, unless it only repeats the
		// prompt (Cursor's, which C3 gives the call as its content).
		if !said && k.result != "" && k.result != k.prompt {
			r.send(&frames, sid, messageChunk{SessionUpdate: "agent_message_chunk", Content: textBlock{"text", k.result}})
		}
		for _, b := range frames {
			v.Send(pipe.Client, b)
		}
	}
	if b, err := rewrite.Result(f.ID(), []byte("{}")); err == nil {
		v.Send(pipe.Client, b)
	}
	return v
}

// messageChunk is a user or agent message chunk.
type messageChunk struct {
	SessionUpdate string    `json:"sessionUpdate"`
	Content       textBlock `json:"content"`
}

// rawUpdate is an update object kept as it came.
type rawUpdate []byte

func (u rawUpdate) MarshalJSON() ([]byte, error) { return u, nil }

// zedLaunch handles a launch call's session/update for Z1, Z2 and Z4:
// the call's child thread follows its prompt and result; a replayed
// frame (or one of a child the client loaded) gets Zed's key, unless the
// agent gave the call a key of its own; a frame
// with content while the subagent shows progress keeps the progress
// after the vendor's content.
func (r *rewriter) zedLaunch(c *change, key launch.Key, tag string, upd []byte, u *[len(updateKeys)][]byte) {
	z := r.zed
	cl, ok := r.calls.Get(key)
	if !ok || !cl.has() {
		return
	}
	zc, known := z.calls.Get(key)
	fresh := false
	if !known || tag == "tool_call" && zc.sawToolCall {
		k := key.Session + "\x00" + key.ToolCallID
		n, _ := z.counts.Get(k)
		z.counts.Put(k, n+1)
		// A tool_call without content has none: the progress can go
		// after nothing. A call first seen in an update has content the
		// proxy does not know until a frame carries it.
		zc = &zcall{n: n, contentKnown: tag == "tool_call"}
		z.calls.Put(key, zc)
		fresh = true
	}
	zc.sawToolCall = zc.sawToolCall || tag == "tool_call"
	if _, ok := rawjson.Lookup(upd, "_meta", zedInfoKey); ok {
		zc.agentKey = true // sticks, as Zed keeps the key an update leaves out
	}
	if content := u[updContent]; content != nil {
		zc.contentKnown = len(content) <= maxKeptContent
		zc.vendorContent = nil
		if zc.contentKnown {
			// What the client may see of it: no session link (P3).
			kept, _ := withoutLinks(content)
			zc.vendorContent = bytes.Clone(kept)
		}
	}
	defer z.calls.Resize(key)
	replay := z.replayingSession(key.Session)
	if z.keyOn() && !zc.agentKey {
		// A replay puts its children in its own order, the launches'
		// (the oldest launch's child is the first P6 drops), so that
		// those it brings back empty never push out those kept whole.
		kid := r.zedChild(zc, cl, key, replay && fresh)
		if s, err := cl.sub(); err == nil && kid != nil {
			kid.prompt, kid.result = deref(s.Prompt), deref(s.ResultText)
			if kid.result == "" && zc.contentKnown {
				kid.result = contentText(zc.vendorContent)
			}
			z.kids.Resize(zc.child)
		}
		if zc.child != "" && (replay || kid != nil && kid.loaded) {
			info := append(append([]byte(`{"session_id":`), rawjson.Text(zc.child)...), `,"message_start_index":0}`...)
			c.edits = append(c.edits, rawjson.Edit{Path: []string{"params", "update", "_meta", zedInfoKey}, Value: info})
			if s, err := cl.sub(); err == nil && s.ToolName != "" {
				c.edits = append(c.edits, rawjson.Edit{Path: []string{"params", "update", "_meta", zedToolNameKey}, Value: rawjson.Text(s.ToolName)})
			}
		}
	}
	if z.progress && !replay && u[updContent] != nil && zc.contentKnown && zc.sentProgress != "" && !cl.status.Ended() &&
		r.env.Client.Emit(rewrite.Finished(cl.acpStatus)) == rewrite.EmitAll {
		// It replaces stripLinks' edit of the content, if any: one edit
		// per path.
		c.edits = slices.DeleteFunc(c.edits, func(e rawjson.Edit) bool { return slices.Equal(e.Path, contentPath) })
		c.edits = append(c.edits, rawjson.Edit{Path: contentPath, Value: withProgress(zc.vendorContent, zc.sentProgress)})
	}
}

// contentPath is a session/update's tool call content.
var contentPath = []string{"params", "update", "content"}

// zedChild returns the child thread of launch call zc (Z2), made on first
// use: C is the agent's own child id where it has one, else S4's
// synthesized id, derived from the session, the toolCallId and the
// launches of that id since the session's last load (the same on every
// replay). renew (a replay's first frame of the call) makes it the
// newest child; nil when it is not held.
func (r *rewriter) zedChild(zc *zcall, cl *call, key launch.Key, renew bool) *zchild {
	z := r.zed
	if zc.child == "" {
		zc.child = childID(key.Session, key.ToolCallID, zc.n)
		if cl.own && cl.child != "" {
			zc.child = cl.child
		}
	}
	if k, ok := z.kids.Get(zc.child); ok {
		if renew && !z.kids.Put(zc.child, k) {
			return nil
		}
		return k
	}
	if zc.made && !renew {
		return nil // dropped (P6): its later frames alone would be a thread with a hole
	}
	if renew && z.kids.Len() >= r.kidsCap() {
		// The replay brings back a child P6 dropped while the table is
		// full: it is not made again at the cost of one kept whole (a
		// load of it gets {} alone, Z2).
		return nil
	}
	zc.made = true
	k := &zchild{parent: key.Session, toolCallID: key.ToolCallID}
	if !z.kids.Put(zc.child, k) {
		return nil
	}
	return k
}

// zedLinked handles a frame the vendor linked to launch call parent of
// session sid (Z2, Z4): kept for the child's thread; sent on the child
// too once the client loaded it; the call's progress follows it.
func (r *rewriter) zedLinked(c *change, sid, parent string, upd []byte) {
	z := r.zed
	key := launch.Key{Session: sid, ToolCallID: parent}
	zc, ok := z.calls.Get(key)
	cl, okc := r.calls.Get(key)
	if !ok || !okc {
		return
	}
	replay := z.replayingSession(sid)
	if z.keyOn() && !zc.agentKey {
		if kid := r.zedChild(zc, cl, key, false); kid != nil {
			r.keep(zc.child, kid, upd, replay)
			// A child loaded during its parent's replay (loads before
			// the replay reset it) gets the rest of the replay too.
			if kid.loaded {
				if b, err := sessionUpdateFrame(zc.child, rawUpdate(upd)); err == nil {
					c.post = append(c.post, b)
				}
			}
		}
	}
	if !z.progress || replay || !zc.progress.add(upd) {
		return
	}
	text := zc.progress.render()
	if text == zc.sentProgress || !zc.contentKnown || cl.status.Ended() || r.env.Client.Emit(rewrite.Finished(cl.acpStatus)) != rewrite.EmitAll {
		z.calls.Resize(key)
		return
	}
	zc.sentProgress = text
	z.calls.Resize(key)
	b, err := sessionUpdateFrame(cl.session, toolCallUpdate{SessionUpdate: "tool_call_update", ToolCallID: parent,
		Status: cl.acpStatus, Content: withProgress(zc.vendorContent, text), Meta: r.zedMeta(zc, cl, replay)})
	if err != nil {
		r.log.Error("progress update not built", "rule", "Z4", "err", err)
		return
	}
	c.post = append(c.post, b)
}

// zedMeta is the _meta of a frame the proxy emits for a launch call: the
// snapshot (rule M) and, when the client is to see the card, Zed's key.
func (r *rewriter) zedMeta(zc *zcall, cl *call, replay bool) []byte {
	m := []byte(`{"` + metaKey + `":{"subagent":`)
	m = append(append(m, cl.raw...), "}}"...)
	if k, ok := r.zed.kids.Get(zc.child); ok && r.zed.keyOn() && (replay || k.loaded) {
		m, _ = rawjson.Set(m, append(append([]byte(`{"session_id":`), rawjson.Text(zc.child)...), `,"message_start_index":0}`...), zedInfoKey)
	}
	return m
}

// kidsCap is the most child threads the table holds (P6's entry cap).
func (r *rewriter) kidsCap() int {
	if r.env.MaxEntries > 0 {
		return r.env.MaxEntries
	}
	return table.DefaultEntries
}

// keep adds a linked frame to child C's thread (Z2, Z3): the first frame
// a replay brings replaces what was kept live; past maxKeptPerChild the
// rest is not kept (logged once), and past maxKeptChildren the oldest
// child goes (P6).
func (r *rewriter) keep(id string, k *zchild, upd []byte, replay bool) {
	z := r.zed
	if replay && !k.replayed {
		k.frames, k.keptBytes, k.full, k.replayed = nil, 0, false, true
	}
	if k.full {
		return
	}
	if k.keptBytes+int64(len(upd)) > maxKeptPerChild {
		k.full = true
		r.once(slog.LevelInfo, "child full", "a child thread holds the most the proxy keeps: its later frames stay on the parent only", "rule", "Z2", "childSessionId", id)
		return
	}
	k.frames = append(k.frames, bytes.Clone(upd))
	k.keptBytes += int64(len(upd)) + 24
	z.kids.Resize(id)
	for z.kids.Bytes() > maxKeptChildren && z.kids.Len() > 1 {
		z.kids.Each(func(oldest string, _ *zchild) bool {
			z.kids.Delete(oldest)
			r.log.Debug("oldest child thread dropped", "rule", "P6", "childSessionId", oldest)
			return false
		})
	}
}

// zedPermission moves a permission request the vendor linked to launch
// call parent to that call's child thread once the client loaded it (Z2);
// before, it stays on the parent, where the client can answer it (Zed
// answers a request on a session it has not loaded "unknown session").
func (r *rewriter) zedPermission(c *change, sid, parent string) {
	z := r.zed
	if !z.keyOn() {
		return
	}
	zc, ok := z.calls.Get(launch.Key{Session: sid, ToolCallID: parent})
	if !ok || zc.child == "" {
		return
	}
	if k, ok := z.kids.Get(zc.child); ok && k.loaded {
		c.edits = append(c.edits, rawjson.Edit{Path: []string{"params", "sessionId"}, Value: rawjson.Text(zc.child)})
	}
}

// zedDrop forgets a closed session's launch calls and child threads (P6).
func (r *rewriter) zedDrop(sid string) {
	if z := r.zed; z != nil {
		z.calls.DropSession(sid)
		z.kids.DropSession(sid)
		z.replaying.Delete(sid)
		prefix := sid + "\x00"
		z.counts.DeleteFunc(func(k string, _ int) bool { return strings.HasPrefix(k, prefix) })
	}
}

// contentText returns the text of a tool call content list's text
// blocks, one per line.
func contentText(content []byte) string {
	var parts []string
	_ = rawjson.Elements(content, func(el []byte) bool {
		if t, _ := rawjson.LookupString(el, "type"); t == "content" {
			if s, ok := rawjson.LookupString(el, "content", "text"); ok && s != "" {
				parts = append(parts, s)
			}
		}
		return true
	})
	return strings.Join(parts, "\n")
}

// zedOptions are the module's options for rules Z1-Z4.
func zedOptions() []rewrite.Option {
	return []rewrite.Option{{
		Name:    ZedSubagentsOption,
		Usage:   "Zed's subagent cards and child threads (rules Z1-Z3): auto (the known-client table: Zed), on (any client that did not opt in to Subagent Sessions), off",
		Kind:    rewrite.StringOption,
		Default: choiceAuto,
		Choices: []string{choiceAuto, choiceOn, choiceOff},
	}, {
		Name:    SubagentProgressOption,
		Usage:   "a subagent's progress lines on its launch call's content (rule Z4): auto (the known-client table: Zed), on (any client that did not opt in to Subagent Sessions), off",
		Kind:    rewrite.StringOption,
		Default: choiceAuto,
		Choices: []string{choiceAuto, choiceOn, choiceOff},
	}}
}

// zedUpdate applies Z1-Z4 to an agent's session/update on session sid.
func (r *rewriter) zedUpdate(c *change, sid, tag string, upd []byte, u *[len(updateKeys)][]byte, mk marks) {
	if mk.parent != "" {
		r.zedLinked(c, sid, mk.parent, upd)
	}
	if (tag == "tool_call" || tag == "tool_call_update") && mk.snapshot != nil {
		id, _ := rawjson.DecodeString(u[updToolCallID])
		r.zedLaunch(c, launch.Key{Session: sid, ToolCallID: id}, tag, upd, u)
	}
}

package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/rewrite/meta"
	"github.com/acp-normalize/acp-normalize/rewrite/table"
)

// NonJSONPolicy says what happens to a line that is not JSON (rule F2).
type NonJSONPolicy int

const (
	// DropNonJSON logs and records non-JSON lines but does not forward them.
	DropNonJSON NonJSONPolicy = iota
	// ForwardNonJSON relays them like any other line.
	ForwardNonJSON
)

// ParseNonJSONPolicy parses "drop" or "forward".
func ParseNonJSONPolicy(s string) (NonJSONPolicy, error) {
	switch s {
	case "drop":
		return DropNonJSON, nil
	case "forward":
		return ForwardNonJSON, nil
	}
	return 0, fmt.Errorf("--non-json must be drop or forward, not %q", s)
}

// maxModules bounds the module list (a trigger match is a bit mask, whose
// top two bits are the router's own).
const maxModules = 62

// maxPending bounds the client requests tracked for rule F6 (P6): a
// client never has this many requests open with a working agent; past it,
// new requests are not tracked (they get no -32603 if the agent dies).
const maxPending = 1 << 14

// RouterConfig configures a Router.
type RouterConfig struct {
	Modules []rewrite.Module
	// Settings are the run's option values (the shared options and every
	// module's own); each module gets them in its Env.
	Settings rewrite.Settings
	Logger   *slog.Logger
	// Version is advertised in the initialize response (rule M).
	Version string
	NonJSON NonJSONPolicy
	// Capture, when set, receives every input frame and every output that
	// differs from plain forwarding (rule R1).
	Capture *pipe.CaptureWriter
	// MaxHeldBytes caps the bytes all modules together hold for the
	// connection (P6); table.DefaultBytes (64 MiB) when zero.
	MaxHeldBytes int64
	// MaxEntries caps each table of each module (P6);
	// table.DefaultEntries (1024) when zero.
	MaxEntries int
	// IDToken makes the ids of the proxy's own requests unique to this
	// proxy: "acp-normalize:TOKEN:N" (rule C12). Run sets a random one when
	// it is empty; empty gives "acp-normalize:N" (replay of a capture made
	// without one, tests).
	IDToken string
}

// Out is one frame the Router wants written.
type Out struct {
	To    pipe.Side
	Frame []byte
	// Op is "" for a plainly forwarded frame, else one of pipe.OpReplace,
	// OpReply, OpEmit, OpRequest. Dropped frames produce no Out.
	Op string
	// Re is the sequence number of the input frame that caused it.
	Re int64
}

type attached struct {
	mod    rewrite.Module
	rw     rewrite.Rewriter
	logger *slog.Logger
	warned map[string]bool // fail-open log keys already logged at warn
}

type proxyRequest struct {
	mod    int
	to     pipe.Side
	cookie any
}

// Router decides what each frame becomes. Handle may be called from one
// goroutine per side at once; module calls are serialized.
type Router struct {
	cfg   RouterConfig
	log   *slog.Logger
	mods  []*attached
	names []string // the modules' names, for the advertisement (rule M)
	// client is the connection's client (P7), shared by every module's
	// Env; filled in when the client's initialize request passes.
	client *rewrite.Client
	seq    atomic.Int64
	// triggers finds the modules a frame concerns without decoding it:
	// the modules' own triggers, the router's, and those modules watch
	// (rewrite.Env.Watcher). Swapped whole when a watch changes, so that
	// the other side's scan, which runs outside mu, reads a consistent
	// index.
	triggers atomic.Pointer[TriggerIndex]

	frames [3]rewrite.Frame // per side, reused: each side calls sequentially
	memos  [3]triggerMemo

	// idPrefix starts the proxy's own request ids (C12), see proxyIDPrefix.
	idPrefix []byte

	mu        sync.Mutex
	nextID    uint64
	proxyReqs map[string]proxyRequest // by raw proxy id
	// proxyOrder is the keys of proxyReqs in the order the requests were
	// sent, with some already answered among them (skipped, compacted
	// away): the oldest is forgotten first (P6).
	proxyOrder []string
	forgotten  int64               // proxy requests forgotten unanswered
	pending    map[string]string   // client requests the agent has not answered: raw id by idKey
	initIDs    map[string]struct{} // idKeys of client initialize requests
	closed     bool
	// badFrames: a frame that is not valid JSON [0], or nested too deep
	// [1], was logged at warn (P5: once, then at debug).
	badFrames [2]bool
	// v2 is set once the agent answered initialize with protocolVersion 2
	// or later: every module is off, every frame passes as it came (K4).
	v2 atomic.Bool
	// inner has a bit for each module an acp-normalize proxy behind this
	// one already applies (it advertised them in its initialize result):
	// such a module is off here, so nested proxies neither repeat its work
	// nor overwrite its snapshots with less than the inner one knew.
	inner uint64
	// watched are the triggers modules watch (rewrite.Watcher), with the
	// bits of the modules watching each.
	watched map[string]uint64
}

// scan returns the modules a frame triggers and whether it may answer a
// client request (it has an id and a result or error member): one pass of
// the trigger index finds both, from where the frame stops sharing the
// envelope of the side's last untriggered frame (in a chunk storm, only
// the text is scanned).
func (r *Router) scan(from pipe.Side, raw []byte) (matched uint64, mayAnswer bool) {
	found := r.triggers.Load().MatchMemo(raw, &r.memos[from])
	return found & modulesMask, found&maybeResponse == maybeResponse
}

// NewRouter returns a Router with fresh per-connection module state.
func NewRouter(cfg RouterConfig) (*Router, error) {
	if err := rewrite.Validate(cfg.Modules); err != nil {
		return nil, err
	}
	if len(cfg.Modules) > maxModules {
		return nil, fmt.Errorf("at most %d modules", maxModules)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	r := &Router{
		cfg:       cfg,
		log:       cfg.Logger,
		proxyReqs: make(map[string]proxyRequest),
		pending:   make(map[string]string),
		initIDs:   make(map[string]struct{}),
		idPrefix:  proxyIDPrefix(cfg.IDToken),
		client:    &rewrite.Client{},
	}
	names := make([]string, 0, len(cfg.Modules))
	// One byte budget for the connection: every module's held state
	// together stays under it (P6).
	budget := table.NewBudget(cfg.MaxHeldBytes)
	for i, m := range cfg.Modules {
		lg := cfg.Logger.With("module", m.Name)
		rw := m.New(rewrite.Env{Logger: lg, Settings: cfg.Settings, Budget: budget, MaxEntries: cfg.MaxEntries, Client: r.client,
			Watcher: &watcher{r: r, bit: uint64(1) << i, log: lg}})
		r.mods = append(r.mods, &attached{mod: m, rw: rw, logger: lg, warned: map[string]bool{}})
		names = append(names, m.Name)
	}
	r.names = names
	if _, err := r.advertisement(names, nil); err != nil {
		return nil, err
	}
	r.triggers.Store(r.buildIndex(0))
	return r, nil
}

// buildIndex returns the trigger index of the modules, the router's own
// triggers and the watched ones, numbered gen (the memos of an older
// index start over, see triggerMemo).
func (r *Router) buildIndex(gen uint64) *TriggerIndex {
	x := NewTriggerIndex(r.cfg.Modules)
	x.Add(`"id"`, bitID)
	x.Add(`"result"`, bitResult)
	x.Add(`"error"`, bitResult)
	for t, bits := range r.watched {
		for i := range r.mods {
			if bits&(1<<i) != 0 {
				x.Add(t, uint(i))
			}
		}
	}
	x.gen = gen
	return x
}

// maxWatched bounds the triggers all modules of a connection watch
// together (P6: each watched trigger costs every frame a little).
const maxWatched = 64

// watcher is one module's rewrite.Watcher. Its methods run inside the
// module's calls, so r.mu is held.
type watcher struct {
	r   *Router
	bit uint64
	log *slog.Logger
}

func (w *watcher) Watch(trigger string) bool {
	r := w.r
	if trigger == "" {
		return false
	}
	if r.watched[trigger]&w.bit != 0 {
		return true
	}
	if _, ok := r.watched[trigger]; !ok && len(r.watched) >= maxWatched {
		w.log.Debug("trigger not watched: the connection watches the most it may", "rule", "P6", "max", maxWatched)
		return false
	}
	if r.watched == nil {
		r.watched = map[string]uint64{}
	}
	r.watched[trigger] |= w.bit
	r.rebuild()
	return true
}

// rebuild swaps in an index with the watched triggers as they now are;
// before NewRouter has built the first one (a watch from a module's New),
// that first one will have them.
func (r *Router) rebuild() {
	if old := r.triggers.Load(); old != nil {
		r.triggers.Store(r.buildIndex(old.gen + 1))
	}
}

func (w *watcher) Unwatch(trigger string) {
	r := w.r
	bits, ok := r.watched[trigger]
	if !ok || bits&w.bit == 0 {
		return
	}
	if bits &^= w.bit; bits == 0 {
		delete(r.watched, trigger)
	} else {
		r.watched[trigger] = bits
	}
	r.rebuild()
}

// Bits of the trigger index that the router uses itself, above the
// modules' bits: a frame with an id and a result or error member may
// answer a client request, so it needs the router's bookkeeping.
const (
	bitID     = 63
	bitResult = 62
	// maybeResponse has both bits.
	maybeResponse = 1<<bitID | 1<<bitResult
	modulesMask   = 1<<bitResult - 1
)

// Handle processes one frame read from side from and appends what must be
// written to dst. The frame's bytes may be appended as is (passthrough):
// the caller must write dst before reading its next frame.
func (r *Router) Handle(from pipe.Side, raw []byte, dst []Out) []Out {
	to := from.Other()
	if !pipe.IsJSON(raw) {
		return r.handleNonJSON(from, raw, r.recordInput(from, raw), dst)
	}
	matched, mayAnswer := r.scan(from, raw)
	if r.v2.Load() {
		matched = 0 // K4: no module reads a v2 frame
	}
	if matched == 0 && from == pipe.Agent && !mayAnswer {
		return append(dst, Out{To: to, Frame: raw, Re: r.recordInput(from, raw)})
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	// Numbered under the lock: the capture's order of the frames modules
	// see is the order they saw them in, so a replay sees the same (R3).
	seq := r.recordInput(from, raw)
	f := &r.frames[from]
	f.Reset(from, raw, seq)
	// A copy: f is reset when a module replaces the frame; the slices in it
	// point into raw, which stays valid for the whole call.
	env := *f.Envelope()

	if env.Kind == pipe.Response {
		if key, pr, ok := r.proxyAnswer(from, env.ID); ok {
			return r.handleProxyResponse(dst, f, key, pr)
		}
	}
	if from == pipe.Client && env.Kind == pipe.Request && env.MethodIs("initialize") {
		r.identifyClient(raw)
		if asksV2(env.Params) {
			// The answer may make this a v2 connection (K4): its
			// initialize leaves as it came, whatever the answer.
			matched = 0
		}
	}
	cur, replaced := raw, false
	chk := frameCheck{raw: raw}
	if from == pipe.Agent && env.Kind == pipe.Response {
		cur, replaced, f.Initialize = r.agentAnswered(&env, raw, &chk)
	}
	cur, replaced, outs, dropped := r.runModules(f, 0, matched, cur, replaced, &chk)
	if dropped {
		r.record(seq, pipe.OpDrop, to, nil)
	} else {
		if from == pipe.Client && env.Kind == pipe.Request {
			r.trackClientRequest(&env)
		}
		op := ""
		if replaced {
			op = pipe.OpReplace
			r.record(seq, op, to, cur)
		}
		dst = append(dst, Out{To: to, Frame: cur, Op: op, Re: seq})
	}
	return r.emitOutputs(dst, f, seq, outs)
}

// emitOutputs appends the outputs modules made for a frame from side
// from. A frame a module emits toward the side the frame was going (to
// the client, for an agent frame) joins that stream right after the
// frame (P2), so the modules after the one that emitted it see it as
// they see any frame of that stream, triggers and all: a module that
// works on what the vendor modules made of the stream (the sessions
// module) sees their added frames too. Replies and requests go to
// their side as they are. f is the side's reusable frame. r.mu must be
// held.
func (r *Router) emitOutputs(dst []Out, f *rewrite.Frame, seq int64, outs []moduleOutput) []Out {
	from := f.From
	for _, o := range outs {
		if o.out.Request != nil || o.out.Frame == nil || o.out.To != from.Other() || o.mod+1 >= len(r.mods) {
			dst = r.appendOutputs(dst, from, seq, o.mod, []rewrite.Output{o.out})
			continue
		}
		matched := r.triggers.Load().Match(o.out.Frame) & modulesMask &^ r.inner
		matched &^= 1<<(o.mod+1) - 1 // the emitting module and those before it
		var more []moduleOutput
		cur, dropped := o.out.Frame, false
		if matched != 0 {
			f.Reset(from, cur, seq)
			cur, _, more, dropped = r.runModules(f, o.mod+1, matched, cur, false, nil)
		}
		if !dropped {
			dst = r.appendOutputs(dst, from, seq, o.mod, []rewrite.Output{{To: o.out.To, Frame: cur}})
		}
		dst = r.emitOutputs(dst, f, seq, more)
	}
	return dst
}

// proxyAnswer reports whether a response from side from answers one of
// the proxy's own outstanding requests (C12), and returns it. Only such
// answers are the proxy's: a response that merely has the proxy's id
// prefix (a client that took up the proxy's id scheme for its own
// requests, a second answer to a request already answered, an answer the
// client sends after the proxy forgot the request) is forwarded like any
// other (issue 14.3). r.mu must be held.
func (r *Router) proxyAnswer(from pipe.Side, rawID []byte) (string, proxyRequest, bool) {
	key, _, own := r.ownProxyID(rawID)
	if !own {
		return "", proxyRequest{}, false
	}
	pr, ok := r.proxyReqs[key]
	if !ok || pr.to != from {
		r.log.Debug("response under a proxy-like id that answers no open proxy request; forwarded", "rule", "C12", "id", string(rawID), "from", from.String())
		return "", proxyRequest{}, false
	}
	return key, pr, true
}

// handleProxyResponse consumes a response to one of the proxy's own
// outstanding requests (C12): the module that sent the request gets it.
// r.mu must be held.
func (r *Router) handleProxyResponse(dst []Out, f *rewrite.Frame, key string, pr proxyRequest) []Out {
	r.record(f.Seq, pipe.OpDrop, f.From.Other(), nil)
	delete(r.proxyReqs, key)
	v := r.callResponse(pr, f)
	return r.appendOutputs(dst, f.From, f.Seq, pr.mod, v.Out)
}

// agentAnswered forgets the client request an agent response answers
// (F6), matching ids by value, and adds the advertisement (rule M) to the
// response to initialize. It returns the frame as it now is, and whether
// it answers the client's initialize (V1: the modules learn the agent's
// name from that frame only). r.mu must be held.
func (r *Router) agentAnswered(env *pipe.Envelope, raw []byte, chk *frameCheck) (cur []byte, replaced, initialize bool) {
	rawID := env.ID
	key := idKey(string(rawID))
	delete(r.pending, key)
	if _, ok := r.initIDs[key]; !ok {
		return raw, false, false
	}
	delete(r.initIDs, key)
	if env.Error { // an error carries no capabilities
		return raw, false, true
	}
	if v, ok := rawjson.Lookup(raw, "result", "protocolVersion"); ok && isV2(v) {
		if !r.v2.Swap(true) {
			r.log.Info("the agent speaks ACP protocol v2: every module is off and frames pass unchanged", "protocolVersion", string(v), "rule", "K4")
		}
		return raw, false, true
	}
	if !r.rewritable(chk, pipe.Agent) {
		return raw, false, true
	}
	names := r.names
	var inner *innerAdvert
	if prev, ok := rawjson.Lookup(raw, "result", "agentCapabilities", "_meta", meta.Key); ok {
		names, inner = r.nested(prev)
	}
	advert, err := r.advertisement(names, inner)
	if err != nil {
		r.log.Warn("initialize response left unchanged", "rule", "M", "id", string(rawID), "err", err)
		return raw, false, true
	}
	adv, err := rewrite.Set(raw, advert, "result", "agentCapabilities", "_meta", meta.Key)
	if err != nil {
		r.log.Warn("initialize response left unchanged", "rule", "M", "id", string(rawID), "err", err)
		return raw, false, true
	}
	return adv, true, true
}

// isV2 reports whether a protocolVersion is 2 or later: shapes the v1
// modules must not guess at (K4).
func isV2(v []byte) bool {
	n, err := strconv.ParseUint(string(v), 10, 32)
	return err == nil && n >= 2
}

// asksV2 reports whether initialize params ask for protocol v2 or later.
func asksV2(params []byte) bool {
	v, ok := rawjson.Lookup(params, "protocolVersion")
	return ok && isV2(v)
}

// V2 reports whether the connection turned out to be protocol v2 (K4).
func (r *Router) V2() bool { return r.v2.Load() }

// advertisement returns the initialize result's
// agentCapabilities._meta["acp-normalize"] (rule M): the version, the
// modules, and what the proxy leaves to this client or allows for (P7):
// clientHandles (the vendor methods forwarded to it) and clientTraits,
// each only when there is one. Behind another acp-normalize (inner set),
// those are the inner proxy's for the modules it applies (they are off
// here) and this proxy's for the others; what this proxy was told that
// only the inner one could do is logged at warn.
func (r *Router) advertisement(modules []string, inner *innerAdvert) ([]byte, error) {
	ad := map[string]any{"version": r.cfg.Version, "modules": modules}
	handles, traits := r.client.Handled(), r.client.TraitList()
	if inner != nil {
		handles, traits = r.nestedClient(inner)
	}
	if len(handles) > 0 {
		ad["clientHandles"] = handles
	}
	if len(traits) > 0 {
		ad["clientTraits"] = traits
	}
	return rewrite.Marshal(ad)
}

// innerAdvert is what this router reads of an inner acp-normalize's
// advertisement.
type innerAdvert struct {
	Modules       []string
	ClientHandles []string
	ClientTraits  []rewrite.Trait
}

// UnmarshalJSON reads the modules strictly (they decide what is off
// here) and what is left to the client leniently: a list this version
// cannot read counts as none.
func (a *innerAdvert) UnmarshalJSON(b []byte) error {
	var ad struct {
		Modules       []string        `json:"modules"`
		ClientHandles json.RawMessage `json:"clientHandles"`
		ClientTraits  json.RawMessage `json:"clientTraits"`
	}
	if err := json.Unmarshal(b, &ad); err != nil {
		return err
	}
	a.Modules = ad.Modules
	_ = json.Unmarshal(ad.ClientHandles, &a.ClientHandles)
	_ = json.Unmarshal(ad.ClientTraits, &a.ClientTraits)
	return nil
}

// nestedClient returns the methods left to the client and its traits
// behind an inner acp-normalize (P7): the inner proxy's, then this one's
// that a module still on here acts on. r.mu must be held.
func (r *Router) nestedClient(inner *innerAdvert) ([]string, []rewrite.Trait) {
	handles := slices.Clone(inner.ClientHandles)
	var moot []string
	for _, h := range r.client.Handled() {
		switch {
		case slices.Contains(handles, h):
		case r.decidesHere(h):
			handles = append(handles, h)
		default:
			moot = append(moot, h)
		}
	}
	traits := slices.Clone(inner.ClientTraits)
	var mootTraits []rewrite.Trait
	for _, t := range r.client.TraitList() {
		switch {
		case slices.Contains(traits, t):
		case r.inner != 1<<len(r.mods)-1:
			traits = append(traits, t) // a module on here reads it
		default:
			mootTraits = append(mootTraits, t)
		}
	}
	if len(moot) > 0 || len(mootTraits) > 0 {
		r.log.Warn("the acp-normalize behind this one applies the modules these settings are for and was not given them: give it --client-handles or --client-traits",
			"rule", "P7", "handles", moot, "traits", mootTraits)
	}
	return handles, traits
}

// decidesHere reports whether a module still on in this router owns the
// vendor method: the one that declares it, else the one for methods no
// module knows.
func (r *Router) decidesHere(method string) bool {
	owner := slices.IndexFunc(r.mods, func(m *attached) bool { return m.mod.Handles(method) })
	if owner < 0 {
		owner = slices.IndexFunc(r.mods, func(m *attached) bool { return m.mod.UnknownMethods })
	}
	return owner >= 0 && r.inner&(1<<owner) == 0
}

// identifyClient reads the client's clientInfo.name from its initialize
// request and tells every module's Env what the proxy knows of that
// client (P7), before any module sees the request. r.mu must be held.
func (r *Router) identifyClient(raw []byte) {
	name, _ := rawjson.LookupString(raw, "params", "clientInfo", "name")
	r.client.Identify(name, r.cfg.Modules, r.cfg.Settings)
	if h, t := r.client.Handled(), r.client.TraitList(); len(h) > 0 || len(t) > 0 {
		r.log.Info("methods left to the client, and its traits (from the table of known clients or the flags)", "rule", "P7",
			"client", shorten(name, maxLoggedText), "handles", h, "traits", t)
	}
}

// maxLoggedText bounds the bytes of a peer's text in one log line.
const maxLoggedText = 200

// shorten returns s cut to at most n bytes, marked when cut.
func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// nested handles an agent that is itself an acp-normalize proxy: prev is
// the advertisement in its initialize result. The modules it lists are
// turned off here, and the advertisement this proxy writes lists the
// inner proxy's modules and then this one's other modules (returned).
// r.mu must be held.
func (r *Router) nested(prev []byte) ([]string, *innerAdvert) {
	var ad innerAdvert
	if err := json.Unmarshal(prev, &ad); err != nil {
		r.log.Warn("the agent's acp-normalize advertisement is unreadable; modules stay on", "rule", "M", "err", err)
		return r.names, nil
	}
	names := slices.Clone(ad.Modules)
	for i, m := range r.mods {
		if slices.Contains(ad.Modules, m.mod.Name) {
			r.inner |= 1 << i
		} else {
			names = append(names, m.mod.Name)
		}
	}
	r.log.Info("the agent is behind another acp-normalize; the modules it applies are off here", "modules", ad.Modules)
	return names, &ad
}

// trackClientRequest remembers a client request until the agent answers
// it (F6; at most maxPending, P6). r.mu must be held.
func (r *Router) trackClientRequest(env *pipe.Envelope) {
	r.skipClientID(env.ID)
	if len(r.pending) >= maxPending {
		return
	}
	rawID := string(env.ID)
	key := idKey(rawID)
	r.pending[key] = rawID
	if env.MethodIs("initialize") {
		r.initIDs[key] = struct{}{}
	}
}

// skipClientID keeps the proxy's later request ids clear of a client
// request id spelled like one of them, so that no answer is ever
// ambiguous (issue 14.3). The proxy's requests to the client are told
// apart from the client's requests to the agent by the side an answer
// comes from; this also covers requests a module sends to the agent.
// r.mu must be held.
func (r *Router) skipClientID(rawID []byte) {
	if !bytes.HasPrefix(rawID, r.idPrefix[:2]) && bytes.IndexByte(rawID, '\\') < 0 {
		return // the common case: an integer, or a string not starting "a
	}
	if _, n, own := r.ownProxyID(rawID); own && n < maxSkippedID && n > r.nextID {
		r.nextID = n
	}
}

// frameCheck is the answer of pipe.Check for an input frame, computed
// once, when something would rewrite the frame.
type frameCheck struct {
	raw  []byte
	done bool
	err  error
}

// rewritable reports whether the router and the modules may rewrite the
// input frame of chk, read from side from: a frame that is not valid JSON
// below its envelope, or is nested deeper than pipe.MaxDepth, goes out as
// it came and no module sees it (P5), so that every module treats it
// alike (issue 14: one spliced its snapshot into broken frames, another
// did not). Only frames that something wants to rewrite are checked, once
// each: a passthrough frame never is. The first frame of each kind is
// logged at warn, later ones at debug. r.mu must be held.
func (r *Router) rewritable(chk *frameCheck, from pipe.Side) bool {
	if !chk.done {
		chk.done, chk.err = true, pipe.Check(chk.raw)
		if chk.err != nil {
			what, kind := pipe.ErrNotJSON, 0
			if errors.Is(chk.err, pipe.ErrTooDeep) {
				what, kind = pipe.ErrTooDeep, 1
			}
			level := slog.LevelDebug
			if !r.badFrames[kind] {
				r.badFrames[kind] = true
				level = slog.LevelWarn
			}
			env := pipe.Peek(chk.raw)
			r.log.Log(context.Background(), level, "frame "+what.Error()+": forwarded unchanged, no module rewrites it",
				"rule", "P5", "method", string(env.Method), "id", string(env.ID), "from", from.String(), "err", chk.err)
		}
	}
	return chk.err == nil
}

// runModules offers the frame to every module from start on that it
// triggers, in order. A module that replaces it hands the new frame to
// the next ones; one that drops it ends the loop. chk is the input
// frame's check (nil for a frame a module emitted: the proxy's own, valid
// JSON). r.mu must be held.
func (r *Router) runModules(f *rewrite.Frame, start int, matched uint64, cur []byte, replaced bool, chk *frameCheck) ([]byte, bool, []moduleOutput, bool) {
	var outs []moduleOutput
	from, seq := f.From, f.Seq
	stale := replaced // triggers are checked on the frame as it now is
	matched &^= r.inner
	if matched != 0 && chk != nil && !r.rewritable(chk, from) {
		return cur, replaced, nil, false
	}
	for i := start; i < len(r.mods); i++ {
		m := r.mods[i]
		if stale {
			matched = r.triggers.Load().Match(cur) & modulesMask &^ r.inner
			init := f.Initialize
			f.Reset(from, cur, seq)
			f.Initialize = init
			stale = false
		}
		if matched&(1<<i) == 0 {
			continue
		}
		v, err := r.callRewrite(m, f)
		if err != nil {
			r.failOpen(m, f, err)
			continue
		}
		for _, o := range v.Out {
			outs = append(outs, moduleOutput{mod: i, out: o})
		}
		if v.Drop {
			return cur, replaced, outs, true
		}
		if v.Frame != nil {
			cur, replaced, stale = v.Frame, true, true
		}
	}
	return cur, replaced, outs, false
}

type moduleOutput struct {
	mod int
	out rewrite.Output
}

// appendOutputs turns module outputs into Outs, assigning ids to requests.
// r.mu must be held.
func (r *Router) appendOutputs(dst []Out, from pipe.Side, seq int64, mod int, outs []rewrite.Output) []Out {
	for _, o := range outs {
		if o.To != pipe.Client && o.To != pipe.Agent {
			r.log.Error("module output without a side; dropped", "module", r.mods[mod].mod.Name)
			continue
		}
		frame, op := o.Frame, pipe.OpEmit
		if o.To == from {
			op = pipe.OpReply
		}
		if o.Request != nil {
			r.nextID++
			rawID := rewrite.ProxyID(r.cfg.IDToken, r.nextID)
			var err error
			frame, err = rewrite.RequestFrame(rawID, o.Request.Method, o.Request.Params)
			if err != nil {
				r.log.Error("module request not sent", "module", r.mods[mod].mod.Name, "method", o.Request.Method, "err", err)
				continue
			}
			r.proxyReqs[string(rawID)] = proxyRequest{mod: mod, to: o.To, cookie: o.Request.Cookie}
			r.proxyOrder = append(r.proxyOrder, string(rawID))
			r.compactProxyOrder()
			op = pipe.OpRequest
		}
		if frame == nil {
			continue
		}
		r.record(seq, op, o.To, frame)
		dst = append(dst, Out{To: o.To, Frame: frame, Op: op, Re: seq})
		if o.Request != nil && len(r.proxyReqs) > maxProxyRequests {
			dst = r.forgetOldestProxyRequest(dst, seq)
		}
	}
	return dst
}

// maxProxyRequests bounds the proxy's own requests awaiting an answer
// (P6), as many as a module's table holds: a client that leaves more
// unanswered does not answer them.
const maxProxyRequests = 1024

// forgetOldestProxyRequest forgets the oldest outstanding proxy request
// (P6) as if its side had answered it with an error: its module hears so,
// answers what waits on it (Cursor's request gets "cancelled") and lets go
// of what it held. A late answer to it is forwarded, as any answer to no
// outstanding proxy request (C12). r.mu must be held.
func (r *Router) forgetOldestProxyRequest(dst []Out, seq int64) []Out {
	for len(r.proxyOrder) > 0 {
		key := r.proxyOrder[0]
		r.proxyOrder = r.proxyOrder[1:]
		pr, ok := r.proxyReqs[key]
		if !ok {
			continue // answered already
		}
		delete(r.proxyReqs, key)
		r.forgotten++
		log := r.log.Debug
		if r.forgotten == 1 {
			log = r.log.Info
		}
		log("the client leaves the proxy's requests unanswered: the oldest is forgotten", "rule", "P6",
			"id", key, "outstanding", len(r.proxyReqs), "forgotten", r.forgotten)
		f := rewrite.NewFrame(pr.to, rewrite.ErrorResponse([]byte(key), -32603, "acp-normalize: no answer; request forgotten"), seq)
		v := r.callResponse(pr, f)
		dst = r.appendOutputs(dst, pr.to, seq, pr.mod, v.Out)
		break
	}
	return dst
}

// compactProxyOrder drops the keys of answered requests from proxyOrder
// once they are most of it: its length stays within twice the open
// requests (plus a little), at a cost of O(1) per request sent. r.mu must
// be held.
func (r *Router) compactProxyOrder() {
	if len(r.proxyOrder) <= 2*len(r.proxyReqs)+64 {
		return
	}
	kept := make([]string, 0, len(r.proxyReqs))
	for _, k := range r.proxyOrder {
		if _, ok := r.proxyReqs[k]; ok {
			kept = append(kept, k)
		}
	}
	r.proxyOrder = kept
}

func (r *Router) callRewrite(m *attached, f *rewrite.Frame) (v rewrite.Verdict, err error) {
	defer func() {
		if p := recover(); p != nil {
			v, err = rewrite.Verdict{}, fmt.Errorf("panic: %v", p)
		}
	}()
	return m.rw.Rewrite(f)
}

func (r *Router) callResponse(pr proxyRequest, f *rewrite.Frame) (v rewrite.Verdict) {
	m := r.mods[pr.mod]
	h, ok := m.rw.(rewrite.ResponseHandler)
	if !ok {
		return rewrite.Verdict{}
	}
	defer func() {
		if p := recover(); p != nil {
			r.failOpen(m, f, fmt.Errorf("panic: %v", p))
			v = rewrite.Verdict{}
		}
	}()
	v, err := h.HandleResponse(pr.cookie, f)
	if err != nil {
		r.failOpen(m, f, err)
	}
	return v
}

// failOpen logs a module error (rule P5): at warn the first time for a
// module, rule and method, at debug after that.
func (r *Router) failOpen(m *attached, f *rewrite.Frame, err error) {
	rule := "?"
	var re *rewrite.RuleError
	if errors.As(err, &re) {
		rule = re.Rule
	}
	method := f.Method()
	key := rule + " " + method
	level := slog.LevelDebug
	if !m.warned[key] {
		m.warned[key] = true
		level = slog.LevelWarn
	}
	m.logger.Log(context.Background(), level, "rule failed; frame forwarded unchanged",
		"rule", rule, "method", method, "id", string(f.ID()), "from", f.From.String(), "err", err)
}

func (r *Router) handleNonJSON(from pipe.Side, raw []byte, seq int64, dst []Out) []Out {
	// The line is quoted redacted, as a capture keeps it (R2): logs end
	// up in bug reports. Redacted a little past the cut, so that a secret
	// the cut splits is still known by its shape.
	text := raw
	if len(text) > 2*maxLoggedText {
		text = text[:2*maxLoggedText]
	}
	text = []byte(pipe.RedactText(string(text)))
	if len(text) > maxLoggedText {
		text = text[:maxLoggedText]
	}
	action := "dropped (--non-json=forward relays it)"
	if r.cfg.NonJSON == ForwardNonJSON {
		action = "forwarded"
	}
	r.log.Warn("non-JSON line "+action, "rule", "F2", "from", from.String(), "line", string(text), "bytes", len(raw))
	if r.cfg.NonJSON == ForwardNonJSON {
		return append(dst, Out{To: from.Other(), Frame: raw, Re: seq})
	}
	r.record(seq, pipe.OpDrop, from.Other(), nil)
	return dst
}

func (r *Router) recordInput(from pipe.Side, raw []byte) int64 {
	if r.cfg.Capture == nil {
		return r.seq.Add(1)
	}
	rec := pipe.Record{From: from}
	if pipe.IsJSON(raw) {
		rec.Frame = raw
	} else {
		s := string(raw)
		rec.Text = &s
	}
	return r.cfg.Capture.Write(rec)
}

// RecordStderr records one agent stderr line.
func (r *Router) RecordStderr(line string) {
	if r.cfg.Capture != nil {
		r.cfg.Capture.Write(pipe.Record{From: pipe.Agent, Stderr: &line})
	}
}

func (r *Router) record(re int64, op string, to pipe.Side, frame []byte) {
	if r.cfg.Capture != nil {
		r.cfg.Capture.Write(pipe.Record{Re: re, Op: op, To: to, Frame: frame})
	}
}

// ClientGone is called once when the client has closed its stream (or the
// proxy shuts down): modules get their last word (rule C12), and the
// frames they send are returned. Later calls return nothing.
func (r *Router) ClientGone(dst []Out) []Out {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return dst
	}
	r.closed = true
	unanswered := make([][]any, len(r.mods))
	for id, pr := range r.proxyReqs {
		unanswered[pr.mod] = append(unanswered[pr.mod], pr.cookie)
		delete(r.proxyReqs, id)
	}
	r.proxyOrder = nil
	for i, m := range r.mods {
		c, ok := m.rw.(rewrite.Closer)
		if !ok {
			continue
		}
		v := r.callClose(m, c, unanswered[i])
		dst = r.appendOutputs(dst, 0, 0, i, v.Out)
	}
	return dst
}

func (r *Router) callClose(m *attached, c rewrite.Closer, cookies []any) (v rewrite.Verdict) {
	defer func() {
		if p := recover(); p != nil {
			m.logger.Warn("module close failed", "err", fmt.Sprint(p))
			v = rewrite.Verdict{}
		}
	}()
	return c.Close(cookies)
}

// AgentGone returns a -32603 error response for every client request the
// agent has not answered (rule F6), and forgets them.
func (r *Router) AgentGone(dst []Out) []Out {
	r.mu.Lock()
	defer r.mu.Unlock()
	keys := make([]string, 0, len(r.pending))
	for key := range r.pending {
		keys = append(keys, key)
	}
	slices.Sort(keys)
	for _, key := range keys {
		frame := rewrite.ErrorResponse([]byte(r.pending[key]), jsonrpc2.CodeInternalError, "agent exited")
		r.record(0, pipe.OpReply, pipe.Client, frame)
		dst = append(dst, Out{To: pipe.Client, Frame: frame, Op: pipe.OpReply})
		delete(r.pending, key)
	}
	return dst
}

// Pending returns how many client requests await the agent's answer.
func (r *Router) Pending() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.pending)
}

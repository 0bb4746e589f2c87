package route

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/rewrite/table"
	"github.com/acp-normalize/acp-normalize/route/trigger"
)

// maxModules bounds the module list (a trigger match is a bit mask, whose
// top two bits are the router's own).
const maxModules = 62

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
	triggers atomic.Pointer[trigger.Index]

	frames [3]rewrite.Frame // per side, reused: each side calls sequentially
	memos  [3]trigger.Memo

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
	pending    map[string]string   // client requests the agent has not answered: raw id by IDKey
	initIDs    map[string]struct{} // IDKeys of client initialize requests
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

// maxLoggedText bounds the bytes of a peer's text in one log line.
const maxLoggedText = 200

// shorten returns s cut to at most n bytes, marked when cut.
func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
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
// alike (one spliced its snapshot into broken frames, another
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

func (r *Router) callRewrite(m *attached, f *rewrite.Frame) (v rewrite.Verdict, err error) {
	defer func() {
		if p := recover(); p != nil {
			v, err = rewrite.Verdict{}, fmt.Errorf("panic: %v", p)
		}
	}()
	return m.rw.Rewrite(f)
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

package sessions

import (
	"context"
	"log/slog"
	"strings"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/rewrite/launch"
	"github.com/acp-normalize/acp-normalize/rewrite/table"
)

// Name is the module's name.
const Name = "sessions"

// Module returns the sessions module for the vendor modules vendors (the
// binary's list): their SessionTraits say which agents answer the
// _meta.subagents opt-in with child sessions of their own. It goes after
// the vendor modules in the module list.
func Module(vendors []rewrite.Module) rewrite.Module {
	var traits []vendorTraits
	for _, m := range vendors {
		if m.Sessions == nil {
			continue
		}
		vt := vendorTraits{vendor: m.Name, fallback: m.Sessions.FallbackTitle, draftMeta: m.Sessions.DraftMeta}
		for _, o := range m.Options {
			if o.Name == m.Sessions.NativeOption {
				vt.native, vt.hasNative = o, true
			}
		}
		traits = append(traits, vt)
	}
	return rewrite.Module{
		Name: Name,
		Doc:  "Subagent Sessions for every agent: opt-in bridge, synthesized or translated child sessions, child frames on the child, no stranded request, progress (S0-S8); JetBrains AIR's native child sessions (J1); Zed's subagent cards and child threads, progress on the launch call (Z1-Z4)",
		// Quoted, so that a mention inside a string (escaped \") never
		// matches: a chunk of the main agent's text is never decoded.
		Triggers: []string{
			`"initialize"`,            // the client's opt-in (S0, J1); the agent's answer has the advertisement's "acp-normalize"
			`"` + metaKey + `"`,       // snapshots and parent links the vendor modules added (S4, S5, S8)
			`"` + childPrefix,         // client frames naming a synthesized child (S5)
			`"subagent_spawned"`,      // the draft dialect (S6)
			`"subagent_state_update"`, // (S6)
			`"subagent_update"`,       // the agent's own child sessions (S3, P3)
			`"session_message"`,       // (P3)
			`"session_message_chunk"`, // (P3)
			`"type":"session"`,        // a link block in a call no vendor module marked (P3, J1: taken out)
			`"session/close"`,         // state dropped (P6)
			// The client's own sessions (S7): those it names itself, and
			// those a session/new or session/fork answer gives it (the
			// answer is watched while one is outstanding: answersWatch).
			`"session/new"`,
			`"session/fork"`,
			`"session/load"`,
			`"session/resume"`,
			`"session/prompt"`,
			`"session/cancel"`,
			// The end of a turn: the agent's answer to session/prompt (S4),
			// or an error answer.
			`"stopReason"`,
			`"error":{`,
			// A child session the client was never told of is watched
			// by its id (S7): its notifications and requests, whatever
			// their method, reach the module through that trigger, so
			// no method of every session (fs/*, terminal/*, a "te"
			// opening every chunk's "text" would hit) is a trigger.
		},
		Options: zedOptions(),
		New:     func(env rewrite.Env) rewrite.Rewriter { return newRewriter(env, traits) },
	}
}

// vendorTraits is one vendor module's rewrite.SessionTraits.
type vendorTraits struct {
	vendor    string
	fallback  string
	draftMeta string
	native    rewrite.Option
	hasNative bool
}

var _ rewrite.Rewriter = (*rewriter)(nil)

// rewriter is the module's state for one connection.
type rewriter struct {
	env    rewrite.Env
	log    *slog.Logger
	traits []vendorTraits

	// optedIn: the client's initialize declared Subagent Sessions (S0).
	optedIn bool
	// asked: the agent got the _meta.subagents spelling, which the
	// vendors with a NativeOption answer with their own child sessions.
	asked bool

	calls    *table.Table[launch.Key, *call] // launch calls, by the agent's session and toolCallId
	children *table.Table[string, *child]    // child sessions, by id
	launches *table.Table[string, int]       // "session\x00toolCallId" -> launches (child ids, S1)
	logged   *table.Table[string, struct{}]  // log lines said once
	watching []string                        // hidden children watched (S7), oldest first
	// watchingAll: past maxWatched hidden children, every frame that
	// names a session is watched instead (S7).
	watchingAll bool

	known *table.Table[string, struct{}] // the client's own sessions (S7, known.go)
	asks  *table.Table[string, ask]      // client requests whose answers the module reads, by id
	// watchingAnswers: answersWatch is watched for a session/new or
	// session/fork answer.
	watchingAnswers bool
	// air is what the client declared of JetBrains AIR (J1).
	air airMode
	// zed: rules Z1-Z4, nil when they do not apply to the client.
	zed *zedState
}

func newRewriter(env rewrite.Env, traits []vendorTraits) *rewriter {
	env.Logger = env.Log()
	keyLen := func(k string) int64 { return int64(len(k)) }
	known, asks := newKnownTables(env)
	return &rewriter{
		known:  known,
		asks:   asks,
		env:    env,
		log:    env.Logger,
		traits: traits,
		calls:  launch.NewTable(env, "subagent launch calls", (*call).bytes),
		children: rewrite.NewTable(env, table.Config[string, *child]{Name: "child sessions",
			Size:     func(k string, c *child) int64 { return keyLen(k) + c.bytes() },
			Session:  func(_ string, c *child) string { return c.root },
			Describe: func(k string, c *child) []any { return []any{"childSessionId", k, "sessionId", c.parent} }}),
		launches: rewrite.NewTable(env, table.Config[string, int]{Name: "subagent launches",
			Size: func(k string, _ int) int64 { return keyLen(k) }}),
		logged: rewrite.NewTable(env, table.Config[string, struct{}]{Name: "log lines said",
			Size: func(k string, _ struct{}) int64 { return keyLen(k) }}),
	}
}

// Rewrite implements rewrite.Rewriter.
func (r *rewriter) Rewrite(f *rewrite.Frame) (rewrite.Verdict, error) {
	env := f.Envelope()
	if env.Kind == pipe.Response && f.From == pipe.Agent {
		if f.Initialize {
			r.zedAgentInit(f) // Z1: loadSession
		}
		r.zedAnswer(f) // Z3: a replay's end
		if f.Initialize && r.air == airNative {
			return r.airAnswer(f)
		}
		return r.agentAnswer(f, env)
	}
	if env.Kind != pipe.Request && env.Kind != pipe.Notification {
		return rewrite.Verdict{}, nil
	}
	if f.From == pipe.Client {
		return r.clientFrame(f, env)
	}
	switch {
	case env.MethodIs("session/update"):
		return r.update(f)
	case env.MethodIs("session/request_permission"):
		return r.permission(f)
	case env.Kind == pipe.Request:
		return r.agentRequest(f, "params")
	}
	return rewrite.Verdict{}, nil
}

// clientFrame handles the client's requests and notifications: its
// initialize (S0), one that names a child the proxy made (S5), the
// sessions it names, which are its own (S7), the requests whose answers
// the module reads, the end of a session (P6).
func (r *rewriter) clientFrame(f *rewrite.Frame, env *pipe.Envelope) (rewrite.Verdict, error) {
	if env.MethodIs("initialize") && env.Kind == pipe.Request {
		v, err := r.initialize(f)
		r.zedSetup()
		return v, err
	}
	sid, _ := rawjson.LookupString(env.Params, "sessionId")
	if v, ok := r.zedClient(f, env, sid); ok {
		return v, nil // Z2: before S5
	}
	if r.made(sid) {
		return r.readOnly(f, string(env.Method), sid), nil
	}
	switch method := string(env.Method); {
	case method == "session/close":
		if sid != "" {
			r.dropSession(sid)
		}
		return rewrite.Verdict{}, nil
	case method == "session/new" || method == "session/fork":
		r.clientAsks(f, method, "")
	case method == "session/prompt":
		r.clientAsks(f, method, sid)
	case method == "session/cancel":
		r.cancelled(sid)
	case method == "session/load":
		r.airReload(sid)
	}
	r.named(sid)
	return rewrite.Verdict{}, nil
}

// once logs a line at level the first time key is seen on the
// connection, at debug after that.
func (r *rewriter) once(level slog.Level, key, msg string, args ...any) {
	if _, seen := r.logged.Get(key); seen {
		level = slog.LevelDebug
	} else {
		r.logged.Put(key, struct{}{})
	}
	r.log.Log(context.Background(), level, msg, args...)
}

// dropSession forgets a closed session's launch calls and child
// sessions, and those of its children (P6).
func (r *rewriter) dropSession(sid string) {
	r.calls.DropSession(sid)
	r.zedDrop(sid)
	r.children.DeleteFunc(func(id string, c *child) bool {
		if c.root != sid && c.parent != sid {
			return false
		}
		r.calls.DropSession(id)
		r.unwatch(id)
		return true
	})
	r.known.Delete(sid)
	r.asks.DropSession(sid)
	prefix := sid + "\x00"
	r.launches.DeleteFunc(func(k string, _ int) bool { return strings.HasPrefix(k, prefix) })
}

package cursor

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/rewrite/table"
)

// options are the module's settings for one connection, read from
// rewrite.Env.Settings (--forward-unknown-vendor-methods).
type options struct {
	// ForwardUnknownVendorMethods passes unknown cursor/* methods through
	// to the client instead of answering them with -32601 (rule C13).
	ForwardUnknownVendorMethods bool
}

// Name is the module's name.
const Name = "cursor"

// NativeSubagentsOption is the module's option, on by default, that has
// an opted-in client's initialize reach Cursor with _meta.subagents, so
// that Cursor sends its own child sessions (rules S0, S2); off, the
// proxy makes them from the task tool calls (S1). The sessions module
// reads it (rewrite.SessionTraits).
const NativeSubagentsOption = "cursor-native-subagents"

// Module returns the cursor module.
func Module() rewrite.Module {
	return rewrite.Module{
		Name: Name,
		Doc:  "Cursor: answer cursor/* requests, turn them into standard ACP, tag subagent tool calls (C1-C14, M, S)",
		// Every trigger has a plain quote that is not its first byte, or
		// starts a method value: inside a JSON string a quote is always
		// escaped (\"), so message chunks that merely mention these words
		// (".cursor/rules", \"tool_call\", rawInput._toolName) never match
		// and are never decoded (hot path).
		Triggers: []string{
			`"cursor/`,           // vendor methods (C1, C8-C13)
			`"_cursor/`,          // their older spelling
			`"tool_call"`,        // tool calls (C2-C7)
			`"tool_call_update"`, // their updates (C2-C7)
			`"_toolName"`,        // C7 on frames spelled unusually
			`"initialize"`,       // client capabilities (C10)
			`"session/prompt"`,   // prompts in flight (C14)
			`"session/load"`,     // session activity (C14)
			`"session/resume"`,   // session activity (C14)
			`"session/cancel"`,   // open proxy requests of a session (C12)
			`"session/close"`,    // state dropped (P6)
			`"stopReason"`,       // prompt responses (C14)
			`"error"`,            // failed prompt responses (C14)
		},
		Options: []rewrite.Option{{
			Name:    NativeSubagentsOption,
			Usage:   "for a client that declares subagents, ask Cursor for its own child sessions and translate them; =false: leave them off and make child sessions from its task tool calls",
			Default: "true",
		}},
		// Cursor answers _meta.subagents with child sessions in the
		// draft dialect (S2); without them each task call gets one (S1).
		Sessions: &rewrite.SessionTraits{NativeOption: NativeSubagentsOption, FallbackTitle: "Subagent task",
			DraftMeta: Name}, // subagent_spawned._meta.cursor.{toolCallId, agentId, model}
		VendorMethods: []string{"cursor/*", "_cursor/*"},
		MethodRules: map[string]string{
			"cursor/task": "C1", "cursor/update_todos": "C8", "cursor/create_plan": "C9",
			"cursor/ask_question": "C10", "cursor/generate_image": "C11", "cursor/*": "C13",
		},
		// P7: Kandev's adapter answers cursor/task and shows the
		// subagent's model and agentId from it; through the proxy it
		// keeps doing so.
		HandledByClients: []rewrite.ClientMethods{{Client: "kandev-agentctl", Methods: []string{"cursor/task"}}},
		Summarize:        summarize,
		New:              func(env rewrite.Env) rewrite.Rewriter { return newRewriter(env) },
	}
}

// The interfaces a rewriter implements, checked by the compiler (the
// router finds the optional two by a type assertion, which a changed
// signature would silently fail).
var (
	_ rewrite.Rewriter        = (*rewriter)(nil)
	_ rewrite.ResponseHandler = (*rewriter)(nil) // answers to the requests it sends (C9, C10)
	_ rewrite.Closer          = (*rewriter)(nil) // cancels what is open when the client goes (C12)
)

// rewriter is the module's state for one connection.
type rewriter struct {
	log    *slog.Logger
	opts   options
	client *rewrite.Client // the connection's client (P7)

	elicitForm bool // client declared clientCapabilities.elicitation.form

	calls   *table.Table[string, *call]      // by toolCallId
	early   *table.Table[string, *early]     // cursor/task before its tool call (C4)
	todos   *table.Table[string, [][]byte]   // session -> todo objects (C8)
	prompts *table.Table[string, string]     // prompt request id (pipe.IDKey) -> session (C14)
	open    *table.Table[*pending, struct{}] // proxy requests awaiting the client (C12)
	warned  *table.Table[string, struct{}]   // unknown methods (C13) and oddities already logged
	active  string                           // most recently active session (C14)
	seq     uint64                           // proxy requests created (order of C12 answers)
}

// oddity logs vendor data the module could not use as the rules expect
// (a changed Cursor format, say): at warn the first time for each rule and
// message, at debug after that, so a format change shows at the default
// log level without flooding it (P5).
func (r *rewriter) oddity(rule, msg string, args ...any) {
	key := "oddity\x00" + rule + "\x00" + msg
	level := slog.LevelDebug
	if _, seen := r.warned.Get(key); !seen {
		r.warned.Put(key, struct{}{})
		level = slog.LevelWarn
	}
	r.log.Log(context.Background(), level, msg, append([]any{"rule", rule}, args...)...)
}

func newRewriter(env rewrite.Env) *rewriter {
	env.Logger = env.Log()
	opts := options{
		ForwardUnknownVendorMethods: env.Settings.Bool(rewrite.ForwardUnknownVendorMethods),
	}
	keyLen := func(k string) int64 { return int64(len(k)) }
	return &rewriter{
		log:    env.Logger,
		opts:   opts,
		client: env.Client,
		calls: rewrite.NewTable(env, table.Config[string, *call]{Name: "tool calls",
			Size:     func(k string, c *call) int64 { return keyLen(k) + c.bytes() },
			Describe: func(k string, c *call) []any { return []any{"toolCallId", k, "session", c.session} }}),
		early: rewrite.NewTable(env, table.Config[string, *early]{Name: "cursor/task before its tool call",
			Size:     func(k string, e *early) int64 { return keyLen(k) + e.bytes() },
			Describe: func(k string, _ *early) []any { return []any{"toolCallId", k} }}),
		todos: rewrite.NewTable(env, table.Config[string, [][]byte]{Name: "todo lists",
			Size: func(k string, list [][]byte) int64 {
				size := keyLen(k)
				for _, t := range list {
					size += int64(len(t))
				}
				return size
			},
			Describe: func(k string, _ [][]byte) []any { return []any{"session", k} }}),
		prompts: rewrite.NewTable(env, table.Config[string, string]{Name: "prompts in flight",
			Size: func(k, sid string) int64 { return keyLen(k) + keyLen(sid) }}),
		open: rewrite.NewTable(env, table.Config[*pending, struct{}]{Name: "open proxy requests",
			Size:     func(p *pending, _ struct{}) int64 { return p.bytes() },
			Describe: func(p *pending, _ struct{}) []any { return []any{"session", p.session} }}),
		warned: rewrite.NewTable(env, table.Config[string, struct{}]{Name: "methods warned about",
			Size: func(k string, _ struct{}) int64 { return keyLen(k) }}),
	}
}

// Rewrite implements rewrite.Rewriter. The router hands it valid JSON
// only (P5: a frame malformed below its envelope, or nested too deep, goes
// out as it came, for every module alike).
func (r *rewriter) Rewrite(f *rewrite.Frame) (rewrite.Verdict, error) {
	env := f.Envelope()
	if env.ID != nil && !json.Valid(env.ID) {
		// An id that cannot be echoed cannot be answered (P5).
		return rewrite.Verdict{}, rewrite.RuleErrorf("P5", "id %q is not valid JSON", env.ID)
	}
	switch env.Kind {
	case pipe.Request, pipe.Notification:
		m := f.Method()
		if f.From == pipe.Agent {
			if isVendorMethod(m) {
				return r.vendorMethod(f, m)
			}
			if m == "session/update" {
				return r.sessionUpdate(f)
			}
			return rewrite.Verdict{}, nil
		}
		return r.clientMessage(f, m)
	case pipe.Response:
		if f.From == pipe.Agent {
			if sid, ok := r.prompts.Get(pipe.IDKey(string(env.ID))); ok {
				r.prompts.Delete(pipe.IDKey(string(env.ID)))
				r.touch(sid)
			}
		}
	}
	return rewrite.Verdict{}, nil
}

func isVendorMethod(m string) bool {
	return strings.HasPrefix(m, "cursor/") || strings.HasPrefix(m, "_cursor/")
}

// vendorMethod dispatches an agent-to-client cursor/* method. A vendor
// method must never reach the client, even when its handling fails
// (which only a bug can make happen): the failure is logged and the
// frame stays dropped, with whatever answer was already made.
func (r *rewriter) vendorMethod(f *rewrite.Frame, m string) (rewrite.Verdict, error) {
	if r.client.Handles(m) {
		return r.leftToClient(f, m)
	}
	v, err := r.dispatchVendor(f, m)
	if err != nil && v.Drop {
		r.log.Warn("Cursor method handled only in part", "method", m, "id", string(f.ID()), "err", err)
		return v, nil
	}
	return v, err
}

func (r *rewriter) dispatchVendor(f *rewrite.Frame, m string) (rewrite.Verdict, error) {
	switch strings.TrimPrefix(m, "_") {
	case "cursor/task":
		return r.task(f)
	case "cursor/update_todos":
		return r.updateTodos(f)
	case "cursor/create_plan":
		return r.createPlan(f)
	case "cursor/ask_question":
		return r.askQuestion(f)
	case "cursor/generate_image":
		return r.generateImage(f)
	}
	return r.unknownMethod(f, m)
}

// leftToClient handles a vendor method the client handles itself (rule
// P7): the frame goes to the client unchanged and its answer to Cursor;
// what the method says still goes into the module's state (the
// snapshot, the todo list), and the standard frames the rules add for
// it still follow it, except those that would ask the client for an
// answer (C9, C10: the client answers the method itself) and, for
// cursor/task, the title, name and content of C3's update (the client
// shows the task its own way: it sees the stream it would see without
// the proxy, with the snapshot).
func (r *rewriter) leftToClient(f *rewrite.Frame, m string) (rewrite.Verdict, error) {
	var v rewrite.Verdict
	var err error
	switch strings.TrimPrefix(m, "_") {
	case "cursor/task":
		v, err = r.task(f)
	case "cursor/update_todos", "cursor/create_plan":
		// The plan update (C8, C9) is standard; the proxy's answer and
		// C9's permission request are not sent.
		v, err = r.dispatchVendor(f, m)
	}
	out := v.Out[:0]
	for _, o := range v.Out {
		if o.To == pipe.Client && o.Request == nil {
			out = append(out, o)
		}
	}
	v.Out = out
	v.Frame, v.Drop = nil, false
	if err != nil {
		r.log.Warn("Cursor method left to the client handled only in part", "rule", "P7", "method", m, "err", err)
	}
	return v, nil
}

// unknownMethod applies rule C13.
func (r *rewriter) unknownMethod(f *rewrite.Frame, m string) (rewrite.Verdict, error) {
	var v rewrite.Verdict
	if r.opts.ForwardUnknownVendorMethods {
		return v, nil
	}
	// P7: a method the client handles never gets here (vendorMethod
	// forwards it first).
	if _, seen := r.warned.Get(m); !seen {
		r.warned.Put(m, struct{}{})
		// Info: handled (cursor/report_usage is in every session), nothing
		// for the user to do (the default level shows warn and above).
		r.log.Info("unknown Cursor method answered by the proxy (--forward-unknown-vendor-methods passes it on)",
			"rule", "C13", "method", m)
	}
	return rewrite.RefuseMethod(f, m), nil // the one C13/V7 answer, as the methods module's
}

// clientMessage follows the client's requests and notifications.
func (r *rewriter) clientMessage(f *rewrite.Frame, m string) (rewrite.Verdict, error) {
	var v rewrite.Verdict
	switch m {
	case "initialize":
		return r.initialize(f)
	case "session/prompt":
		sid, _ := rawjson.LookupString(f.Raw, "params", "sessionId")
		if sid != "" && f.ID() != nil {
			r.putPrompt(pipe.IDKey(string(f.ID())), sid) // the one id equality (F6)
		}
		r.touch(sid)
	case "session/load", "session/resume":
		sid, _ := rawjson.LookupString(f.Raw, "params", "sessionId")
		r.touch(sid)
	case "session/cancel":
		sid, _ := rawjson.LookupString(f.Raw, "params", "sessionId")
		v.Out = r.cancelSession(sid, v.Out)
	case "session/close":
		sid, _ := rawjson.LookupString(f.Raw, "params", "sessionId")
		if sid != "" {
			v.Out = r.cancelSession(sid, v.Out)
			r.dropSession(sid)
		}
	}
	return v, nil
}

func (r *rewriter) putPrompt(id, sid string) {
	r.prompts.Put(id, sid)
}

// touch marks sid as the most recently active session.
func (r *rewriter) touch(sid string) {
	if sid != "" {
		r.active = sid
	}
}

// initialize reads the client's capabilities.
func (r *rewriter) initialize(f *rewrite.Frame) (rewrite.Verdict, error) {
	var v rewrite.Verdict
	if f.Kind() != pipe.Request {
		return v, nil
	}
	caps, ok := f.Lookup("params", "clientCapabilities")
	if !ok || rawjson.FirstByte(caps) != '{' {
		return v, nil
	}
	r.elicitForm = present(caps, "elicitation", "form")
	return v, nil
}

// present reports whether obj has a non-null value at path.
func present(obj []byte, path ...string) bool {
	v, ok := rawjson.Lookup(obj, path...)
	return ok && !bytes.Equal(v, []byte("null"))
}

// attribute finds the session of a vendor method (rule C14).
func (r *rewriter) attribute(params []byte, toolCallID string) string {
	if sid, ok := rawjson.LookupString(params, "sessionId"); ok && sid != "" {
		return sid
	}
	if toolCallID != "" {
		if c, ok := r.calls.Get(toolCallID); ok && c.session != "" {
			return c.session
		}
	}
	one, n := "", 0
	r.prompts.Each(func(_ string, sid string) bool {
		if sid != one {
			one = sid
			n++
		}
		return n < 2
	})
	if n == 1 {
		return one
	}
	return r.active
}

// dropSession forgets everything about a closed session (rule P6).
func (r *rewriter) dropSession(sid string) {
	r.calls.DeleteFunc(func(_ string, c *call) bool { return c.session == sid })
	r.early.DeleteFunc(func(_ string, e *early) bool { return e.session == sid })
	r.todos.Delete(sid)
	r.prompts.DeleteFunc(func(_ string, s string) bool { return s == sid })
	if r.active == sid {
		r.active = ""
	}
}

// str returns the JSON string raw decoded, or "" when raw is no string.
func str(raw []byte) string {
	s, _ := rawjson.DecodeString(bytes.TrimSpace(raw))
	return s
}

// strAt returns the string at path in obj, or "".
func strAt(obj []byte, path ...string) string {
	s, _ := rawjson.LookupString(obj, path...)
	return s
}

// sessionUpdateFrame returns a session/update notification for sid.
func sessionUpdateFrame(sid string, update any) ([]byte, error) {
	return rewrite.Notification("session/update", struct {
		SessionID string `json:"sessionId"`
		Update    any    `json:"update"`
	}{sid, update})
}

package rewrite

import (
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strings"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite/table"
)

// Module describes a vendor module.
type Module struct {
	// Name is the module's name on the command line (--modules) and in the
	// initialize advertisement: lower case letters, digits and '-'.
	Name string
	// Doc is a one-line description.
	Doc string
	// Triggers are byte strings; a frame that contains none of them skips
	// the module without being decoded. A trigger that starts with '"' is
	// JSON text, written compact: strings (printable ASCII, no
	// backslash; the last may lack its closing quote, a prefix) and the
	// punctuation :,{}[]. Such a trigger also matches every other
	// spelling of that text a JSON parser reads the same (blanks between
	// tokens, escaped characters: `"toolCallId": "invoke\u005fagent__`
	// matches `"toolCallId":"invoke_agent__`), for the same small cost.
	Triggers []string
	// Agents are the initialize result's agentInfo.name values of the
	// agents the module is written for. A module that waits for them (its
	// Triggers hold AgentInfoTrigger; rule V1, Identity) acts only on
	// their connections, or with --vendor naming it; one that does not
	// acts on the frames its triggers find from any agent, and Agents
	// only says whose it is. Tools (probe) read it to say which module
	// acts on an agent and why.
	Agents []string
	// Options are the module's own command-line options; the module reads
	// them (and the SharedOptions) from Env.Settings in New.
	Options []Option
	// UnknownMethods, when set, also hands the module every frame with a
	// "method" string that is neither an ACP schema method
	// (StandardMethods) nor '_'-prefixed, decided by the trigger scan at
	// the cost of one lookup per "method" key, so that standard frames
	// (session/update) still skip the module undecoded (rules C13, V7).
	// The member may be nested: the module checks the frame's own method.
	UnknownMethods bool
	// VendorMethods are the non-standard methods the module handles, as
	// the vendor spells them (a trailing '*' matches any suffix), so that
	// tools such as the replay timeline can name them without a list of
	// their own.
	VendorMethods []string
	// Sessions, when set, is what the sessions module (rules S0-S8),
	// which works from the snapshots every vendor module writes, must
	// know of the vendor besides.
	Sessions *SessionTraits
	// HandledByClients names clients known to handle some of the
	// module's VendorMethods themselves (rule P7): for such a client the
	// module forwards those requests unchanged and sends no answer of
	// its own; everything else it does still happens. The router tells
	// the module through Env.Client; --client-handles replaces the table.
	HandledByClients []ClientMethods
	// MethodRules names, for each of the module's VendorMethods (same
	// spelling, a trailing '*' matching any suffix), the contract rule
	// that covers it, for tools such as `check` to cite (RuleOf).
	MethodRules map[string]string
	// Summarize, when set, describes the params of one of the module's
	// VendorMethods on one line, for the replay timeline; quote shows a
	// vendor text (quoted, on one line, shortened).
	Summarize func(method string, params []byte, quote func(string) string) string
	// New returns the module's state for one connection.
	New func(Env) Rewriter
}

// SessionTraits is what a vendor module declares for the sessions module.
type SessionTraits struct {
	// NativeOption names one of the module's bool Options. While it is
	// on, an opted-in client's initialize is forwarded with the
	// _meta.subagents spelling of the opt-in (rule S0), which the
	// vendor's agent answers with child sessions of its own in the
	// draft dialect (S2, S6), so the sessions module synthesizes none
	// for the module's launch calls (S4); off, _meta.subagents is left
	// out and the proxy synthesizes them (S1).
	NativeOption string
	// FallbackTitle is a synthesized child session's title when the
	// launch call's snapshot has no description (S1's "Subagent task");
	// "" for rule S4's: the prompt's first line, else "Subagent".
	FallbackTitle string
	// DraftMeta is the _meta key under which the agent's draft
	// subagent_spawned names its launch call (toolCallId), the child's
	// agentId and model (S2, S6); "" when it names none.
	DraftMeta string
}

// Handles reports whether method is one of the module's VendorMethods.
func (m *Module) Handles(method string) bool {
	for _, p := range m.VendorMethods {
		if prefix, ok := strings.CutSuffix(p, "*"); ok && strings.HasPrefix(method, prefix) || p == method {
			return true
		}
	}
	return false
}

// RuleOf returns the rule of MethodRules that covers method: the exact
// spelling first, else the longest matching "prefix*".
func (m *Module) RuleOf(method string) (string, bool) {
	if r, ok := m.MethodRules[method]; ok {
		return r, true
	}
	best, rule := -1, ""
	for p, r := range m.MethodRules {
		if prefix, ok := strings.CutSuffix(p, "*"); ok && strings.HasPrefix(method, prefix) && len(prefix) > best {
			best, rule = len(prefix), r
		}
	}
	return rule, best >= 0
}

// Env is what a module's per-connection state gets from the proxy: the
// router builds it from its configuration (the run's settings, the caps of
// rule P6) for every module alike, so a module declares no configuration
// of its own beyond its Options.
type Env struct {
	// Logger logs with the module's name attached.
	Logger *slog.Logger
	// Settings are the option values of the run (the router's
	// RouterConfig.Settings): the shared options and every module's own.
	Settings Settings
	// Budget, when set, is the connection's byte budget shared by every
	// module's tables; a table makes its own (table.DefaultBytes) when
	// it is nil.
	Budget *table.Budget
	// MaxEntries caps the entries of each of the module's tables
	// (table.DefaultEntries when zero).
	MaxEntries int
	// Watcher adds triggers for the rest of the connection (nil in a
	// test without a router: use Env.Watch and Env.Unwatch).
	Watcher Watcher
	// Client is the connection's client (rule P7), the same for every
	// module; the router fills it in when the client's initialize
	// request passes. Nil (tests, tools) is a client nothing is known of.
	Client *Client
}

// Watcher lets a module see more frames while a connection runs: a
// watched trigger selects frames as the module's own Triggers do, from
// the next frame the proxy reads on. A module watches what it learns at
// run time, such as the id of a session whose every frame it must see
// (rule S7), so that no frame without it is ever decoded for it (P1).
// Its methods may only be called from inside the module's Rewrite,
// HandleResponse or Close.
type Watcher interface {
	// Watch adds trigger; false when it cannot (empty, or the
	// connection watches the most it may: P6).
	Watch(trigger string) bool
	// Unwatch removes a trigger Watch added.
	Unwatch(trigger string)
}

// Watch adds a trigger through e.Watcher (see Watcher); false without one.
func (e Env) Watch(trigger string) bool {
	return e.Watcher != nil && e.Watcher.Watch(trigger)
}

// Unwatch removes a watched trigger.
func (e Env) Unwatch(trigger string) {
	if e.Watcher != nil {
		e.Watcher.Unwatch(trigger)
	}
}

// NewTable returns a capped table of the connection (rule P6): cfg with
// env's logger, byte budget and entry cap filled in where cfg leaves them
// unset.
func NewTable[K comparable, V any](env Env, cfg table.Config[K, V]) *table.Table[K, V] {
	if cfg.Logger == nil {
		cfg.Logger = env.Logger
	}
	if cfg.Budget == nil {
		cfg.Budget = env.Budget
	}
	if cfg.Entries == 0 {
		cfg.Entries = env.MaxEntries
	}
	return table.New(cfg)
}

// Log returns the module's logger, or one that discards when none is set.
func (e Env) Log() *slog.Logger {
	if e.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return e.Logger
}

var moduleName = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)

// Validate checks a module list: every module has a valid, unique name, a
// doc line, at least one non-empty trigger and a constructor.
func Validate(mods []Module) error {
	seen := make(map[string]bool, len(mods))
	var errs []error
	for i, m := range mods {
		if !moduleName.MatchString(m.Name) {
			errs = append(errs, fmt.Errorf("module %d: invalid name %q", i, m.Name))
		}
		if seen[m.Name] {
			errs = append(errs, fmt.Errorf("module %q: listed twice", m.Name))
		}
		seen[m.Name] = true
		if m.Doc == "" {
			errs = append(errs, fmt.Errorf("module %q: no doc", m.Name))
		}
		if len(m.Triggers) == 0 && !m.UnknownMethods {
			errs = append(errs, fmt.Errorf("module %q: no triggers", m.Name))
		}
		for _, t := range m.Triggers {
			if t == "" {
				errs = append(errs, fmt.Errorf("module %q: empty trigger", m.Name))
			}
			if !quotedTriggerOK(t) {
				errs = append(errs, fmt.Errorf("module %q: trigger %q is no compact JSON text of strings and :,{}[]", m.Name, t))
			}
		}
		if m.New == nil {
			errs = append(errs, fmt.Errorf("module %q: no constructor", m.Name))
		}
		if st := m.Sessions; st != nil && st.NativeOption != "" && !slices.ContainsFunc(m.Options, func(o Option) bool {
			return o.Name == st.NativeOption && o.Kind == BoolOption
		}) {
			errs = append(errs, fmt.Errorf("module %q: Sessions.NativeOption %q is none of its bool options", m.Name, st.NativeOption))
		}
		errs = append(errs, validateClients(m)...)
	}
	errs = append(errs, validateOptions(mods))
	return errors.Join(errs...)
}

// quotedTriggerOK reports whether a trigger that starts with a quote is
// JSON text as Module.Triggers describes (any other trigger is).
func quotedTriggerOK(t string) bool {
	if !strings.HasPrefix(t, `"`) {
		return true
	}
	inString := false
	for i := 0; i < len(t); i++ {
		switch c := t[i]; {
		case c == '"':
			inString = !inString
		case c < 0x20 || c > 0x7e || c == '\\':
			return false
		case !inString && !strings.ContainsRune(":,{}[]", rune(c)):
			return false
		}
	}
	return true
}

// Rewriter is a module's state for one connection.
type Rewriter interface {
	// Rewrite decides what happens to a frame that matched the module's
	// triggers. The frame's bytes are valid only during the call.
	Rewrite(f *Frame) (Verdict, error)
}

// ResponseHandler is implemented by Rewriters that send requests: the
// response to each one is delivered here with the cookie given in
// Verdict.Request, and is consumed (never forwarded). Only the Verdict's
// outputs are used; the response frame itself is always consumed.
type ResponseHandler interface {
	HandleResponse(cookie any, f *Frame) (Verdict, error)
}

// Closer is implemented by Rewriters that have something to say when the
// connection ends: Close is called once, when the client has gone (before
// the agent's stdin is closed) or the proxy shuts down. Requests the proxy
// sent for this module and that are still unanswered are passed as their
// cookies, so that the module can answer the frames that caused them
// (rule C12). Only the Verdict's frame outputs are written.
type Closer interface {
	Close(unanswered []any) Verdict
}

// Frame is a frame handed to a Rewriter.
type Frame struct {
	// From is the side that sent the frame.
	From pipe.Side
	// Raw is the frame's bytes, valid only during the call.
	Raw []byte
	// Seq is the frame's position in the connection (1-based, both
	// directions counted together).
	Seq int64
	// Initialize is set on the agent's answer to the client's initialize
	// request, matched by id by the router: the one frame whose
	// agentInfo.name says who the agent is (rule V1).
	Initialize bool

	env    pipe.Envelope
	peeked bool
}

// NewFrame returns a Frame for raw bytes read from side from.
func NewFrame(from pipe.Side, raw []byte, seq int64) *Frame {
	return &Frame{From: from, Raw: raw, Seq: seq}
}

// Reset reuses f for another frame (Initialize unset).
func (f *Frame) Reset(from pipe.Side, raw []byte, seq int64) {
	*f = Frame{From: from, Raw: raw, Seq: seq}
}

// Envelope returns the frame's envelope, computed on first use.
func (f *Frame) Envelope() *pipe.Envelope {
	if !f.peeked {
		f.env = pipe.Peek(f.Raw)
		f.peeked = true
	}
	return &f.env
}

// Method returns the frame's method, or "".
func (f *Frame) Method() string { return string(f.Envelope().Method) }

// ID returns the raw JSON of the frame's id, or nil.
func (f *Frame) ID() []byte { return f.Envelope().ID }

// Kind returns the frame's kind.
func (f *Frame) Kind() pipe.Kind { return f.Envelope().Kind }

// Lookup returns the raw JSON value at path inside the frame.
func (f *Frame) Lookup(path ...string) ([]byte, bool) { return rawjson.Lookup(f.Raw, path...) }

// RuleError names the contract rule whose handling failed, for the log line
// of a fail-open (rule P5).
type RuleError struct {
	Rule string
	Err  error
}

func (e *RuleError) Error() string { return e.Rule + ": " + e.Err.Error() }
func (e *RuleError) Unwrap() error { return e.Err }

// RuleErrorf returns a *RuleError for rule with a formatted message; %w
// wraps as in fmt.Errorf.
func RuleErrorf(rule, format string, args ...any) error {
	return &RuleError{Rule: rule, Err: fmt.Errorf(format, args...)}
}

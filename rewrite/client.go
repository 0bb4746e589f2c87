package rewrite

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Trait is a way a known client reads standard ACP that the proxy's own
// frames must allow for (rule P7). Traits are about clients, whatever the
// agent: the one table of them is KnownClients, and every module reads
// the connection's through Env.Client.
type Trait string

// The traits the proxy knows.
const (
	// TraitFinishedAsNew: the client forgets a tool call when it
	// finishes and shows any later update for it as a new entry
	// (CodeCompanion.nvim prints a second "Other: Task" line). Such a
	// client gets no update the proxy emits for a call after that call's
	// terminal status (P7); the vendor's own frames still carry the
	// snapshot.
	TraitFinishedAsNew Trait = "finished-as-new"
	// TraitReprintsFinished: the client prints a finished tool call
	// again when a later update changes its title or content (acpx's
	// text output). An update the proxy emits for a call after that
	// call's terminal status carries the snapshot alone, so what the
	// client prints does not change (P7).
	TraitReprintsFinished Trait = "reprints-finished"
)

// Traits lists every trait, for --client-traits and the docs.
func Traits() []Trait { return []Trait{TraitFinishedAsNew, TraitReprintsFinished} }

// Emission is what the proxy may emit for a tool call (rule P7).
type Emission uint8

const (
	// EmitAll: any field the rules give.
	EmitAll Emission = iota
	// EmitSnapshotOnly: the _meta snapshot, no title or content.
	EmitSnapshotOnly
	// EmitNothing: no frame at all.
	EmitNothing
)

// Emit says what the proxy may emit for a tool call whose last vendor
// status was finished (completed or failed) or not, for this client's
// traits (P7). A frame the vendor sent is never held back by it.
func (c *Client) Emit(finished bool) Emission {
	switch {
	case !finished:
		return EmitAll
	case c.Has(TraitFinishedAsNew):
		return EmitNothing
	case c.Has(TraitReprintsFinished):
		return EmitSnapshotOnly
	}
	return EmitAll
}

// Finished reports whether an ACP tool call status is terminal.
func Finished(status string) bool { return status == "completed" || status == "failed" }

// KnownClient is one row of the table of clients the proxy knows by the
// clientInfo.name of their initialize request (rule P7).
type KnownClient struct {
	// Name is the clientInfo.name the client sends (an exact match).
	Name string
	// Product is what people call it.
	Product string
	// Traits are the ways it reads standard ACP that the proxy allows for.
	Traits []Trait
	// Seen says what the proxy's authors found in the client's code,
	// briefly (docs/compatibility.md has the details).
	Seen string
	// SubagentCards: the client draws a tool call that carries
	// _meta.subagent_session_info as a subagent card and loads the child
	// session it names with session/load when it builds a thread's view
	// (Zed), so it gets that key on the launch calls of a thread it
	// reopens and the proxy serves the child (rules Z1-Z3).
	// --zed-subagents overrides it. Not a Trait: it adds to what the
	// client gets rather than allowing for how it reads standard ACP, and
	// is not advertised in the initialize result.
	SubagentCards bool
	// LiveContent: the client shows a running tool call's content and
	// replaces it in place on each update (Zed's tool call card), so a
	// subagent's progress lines on its launch call read as a live status
	// (rule Z4). --subagent-progress overrides it.
	LiveContent bool
}

// KnownClientNamed returns the row of KnownClients for clientInfo.name
// name (an exact match).
func KnownClientNamed(name string) (KnownClient, bool) {
	for _, k := range KnownClients() {
		if k.Name == name {
			return k, true
		}
	}
	return KnownClient{}, false
}

// KnownClients is the one table of known clients and their traits. The
// vendor methods a client handles itself are not here: the module that
// owns the methods declares them (Module.HandledByClients).
func KnownClients() []KnownClient {
	return []KnownClient{{
		Name: "kandev-agentctl", Product: "Kandev",
		Seen: "handles the vendor methods a module says it does (HandledByClients) itself; reads a status-less tool_call_update with title or content as in_progress",
	}, {
		Name: "CodeCompanion.nvim", Product: "CodeCompanion (Neovim)", Traits: []Trait{TraitFinishedAsNew},
		Seen: "drops a tool call from its cache on completed; a later update of it is printed as a new line",
	}, {
		Name: "agent-shell", Product: "agent-shell (Emacs)",
		Seen: "merges updates into the call it keeps; a field an update leaves out keeps its value",
	}, {
		Name: "acpx", Product: "acpx", Traits: []Trait{TraitReprintsFinished},
		Seen: "merges updates into the call it keeps (a status-less update keeps the status); its text output prints a finished call again when its title or output changes",
	}, {
		Name: "zed", Product: "Zed", SubagentCards: true, LiveContent: true,
		Seen: "updates the call it keeps in place; a status-less update keeps the status; shows a plain tool call's content; draws a call with _meta.subagent_session_info as a subagent card that shows only title and status until it has loaded the child, which it does only when it builds a reopened thread's view (so the key goes on replayed launch calls only, Z1)",
	}}
}

// ClientMethods names vendor methods a client handles itself, by the
// clientInfo.name of its initialize request (rule P7).
type ClientMethods struct {
	// Client is the clientInfo.name (an exact match).
	Client string
	// Methods are vendor methods of the module, spelled as on the wire.
	Methods []string
}

// ClientHandlesOption is the shared option that names the vendor methods
// the connection's client handles itself, whatever its name ("none":
// none, which also turns the modules' tables off).
const ClientHandlesOption = "client-handles"

// ClientTraitsOption is the shared option that sets the client's traits,
// whatever its name ("none": none).
const ClientTraitsOption = "client-traits"

// Client is what the proxy knows of the connection's client: its name,
// the vendor methods it handles itself and its traits (rule P7). The
// router fills it in when the client's initialize request passes, before
// any module sees that request, so a module reads it when it handles a
// frame (never copies it in New). A nil *Client is a client the proxy
// knows nothing of: it handles no vendor method and has no trait.
type Client struct {
	name    string
	handles []string
	traits  []Trait
}

// Name returns the client's clientInfo.name ("" before its initialize, or
// when it sent none).
func (c *Client) Name() string {
	if c == nil {
		return ""
	}
	return c.name
}

// Handles reports whether the client handles the vendor method itself:
// the proxy forwards such a request unchanged and sends no answer of its
// own (P7).
func (c *Client) Handles(method string) bool {
	return c != nil && slices.Contains(c.handles, method)
}

// Has reports whether the client has trait t.
func (c *Client) Has(t Trait) bool { return c != nil && slices.Contains(c.traits, t) }

// Handled returns the methods left to the client, in order.
func (c *Client) Handled() []string {
	if c == nil {
		return nil
	}
	return slices.Clone(c.handles)
}

// TraitList returns the client's traits, in order.
func (c *Client) TraitList() []Trait {
	if c == nil {
		return nil
	}
	return slices.Clone(c.traits)
}

// Identify fills c in for a client named name (its clientInfo.name):
// the methods the modules' tables leave to it, and its traits from
// KnownClients, each replaced by the shared options when they are set.
func (c *Client) Identify(name string, mods []Module, s Settings) {
	c.name = name
	c.handles, c.traits = nil, nil
	if spec, ok := s[ClientHandlesOption]; ok {
		c.handles = parseList(spec)
	} else {
		for _, m := range mods {
			for _, h := range m.HandledByClients {
				if h.Client == name {
					c.handles = appendNew(c.handles, h.Methods...)
				}
			}
		}
	}
	if spec, ok := s[ClientTraitsOption]; ok {
		for _, t := range parseList(spec) {
			c.traits = appendNew(c.traits, Trait(t))
		}
		return
	}
	for _, k := range KnownClients() {
		if k.Name == name {
			c.traits = appendNew(c.traits, k.Traits...)
		}
	}
}

// parseList reads a comma-separated option value; "none" is empty.
func parseList(spec string) []string {
	if strings.TrimSpace(spec) == "none" {
		return nil
	}
	var out []string
	for _, p := range strings.Split(spec, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = appendNew(out, p)
		}
	}
	return out
}

func appendNew[T comparable](dst []T, vs ...T) []T {
	for _, v := range vs {
		if !slices.Contains(dst, v) {
			dst = append(dst, v)
		}
	}
	return dst
}

// CheckClientSettings rejects --client-handles values that name a
// standard ACP method (only vendor methods can be left to the client; a
// standard one always passes) and --client-traits values that name no
// trait, so that a typo is a usage error rather than a silent no-op.
func CheckClientSettings(s Settings) error {
	var errs []error
	if spec, ok := s[ClientHandlesOption]; ok {
		if strings.TrimSpace(spec) == "" {
			errs = append(errs, fmt.Errorf("--%s: give METHOD,... or none", ClientHandlesOption))
		}
		std := newMethodSet()
		if list := parseList(spec); len(list) > 1 && slices.Contains(list, "none") {
			errs = append(errs, fmt.Errorf("--%s: none leaves no method to the client: give it alone", ClientHandlesOption))
		}
		for _, m := range parseList(spec) {
			if _, ok := std[m]; ok {
				errs = append(errs, fmt.Errorf("--%s: %s is a standard ACP method; only vendor methods (outside ACP) can be left to the client", ClientHandlesOption, m))
			}
		}
	}
	if spec, ok := s[ClientTraitsOption]; ok {
		if strings.TrimSpace(spec) == "" {
			errs = append(errs, fmt.Errorf("--%s: give TRAIT,... or none", ClientTraitsOption))
		}
		for _, t := range parseList(spec) {
			if t == "none" {
				errs = append(errs, fmt.Errorf("--%s: none: give it alone (no trait)", ClientTraitsOption))
				continue
			}
			if !slices.Contains(Traits(), Trait(t)) {
				errs = append(errs, fmt.Errorf("--%s: unknown trait %q (have: %s, none)", ClientTraitsOption, t, traitNames()))
			}
		}
	}
	return errors.Join(errs...)
}

func traitNames() string {
	names := make([]string, 0, len(Traits()))
	for _, t := range Traits() {
		names = append(names, string(t))
	}
	return strings.Join(names, ", ")
}

// validateClients checks the modules' HandledByClients tables: every
// method is one of the module's VendorMethods, every client named.
func validateClients(m Module) []error {
	var errs []error
	for _, h := range m.HandledByClients {
		if h.Client == "" {
			errs = append(errs, fmt.Errorf("module %q: a HandledByClients entry names no client", m.Name))
		}
		for _, meth := range h.Methods {
			if !m.Handles(meth) {
				errs = append(errs, fmt.Errorf("module %q: client %q handles %q, which is none of the module's VendorMethods", m.Name, h.Client, meth))
			}
		}
	}
	return errs
}

package acpschema

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// files are the schema files, unmodified (SOURCE.md). An embed.FS is
// read-only: this is data, not state.
//
//go:embed v1/*.json v2/*.json
var files embed.FS

// Files returns the embedded schema files: v1/ and v2/, each with
// schema.json, schema.unstable.json, meta.json and meta.unstable.json.
func Files() fs.FS { return files }

// Sender is the side that sent a frame, spelled as captures spell it.
type Sender string

// The two senders.
const (
	FromClient Sender = "client"
	FromAgent  Sender = "agent"
)

// other is the side that receives what s sends.
func (s Sender) other() Sender {
	if s == FromAgent {
		return FromClient
	}
	return FromAgent
}

// Versions are the protocol versions with a schema here.
func Versions() []int { return []int{1, 2} }

// Schema checks frames of one protocol version: the stable schema, and
// the unstable one for the shapes only it has (methods, sessionUpdate
// kinds).
type Schema struct {
	version          int
	stable, unstable *file
	// unstableMethods and unstableUpdates are what the unstable file has
	// and the stable one lacks, derived from the two files.
	unstableMethods map[string]bool
	unstableUpdates map[string]bool
	printer         *message.Printer
}

// file is one schema file, its methods and compiled definitions.
type file struct {
	url      string
	compiler *jsonschema.Compiler
	// defs maps "handler method kind" (kind Request, Notification or
	// Response; handler "agent" or "client", the side that receives a
	// request or notification and sends its response) to a $defs name.
	defs    map[string]string
	methods map[string]bool
	updates map[string]bool // sessionUpdate discriminator values

	mu       sync.Mutex
	compiled map[string]*jsonschema.Schema
}

// Load returns the schema of a protocol version (1 or 2).
func Load(version int) (*Schema, error) {
	if !slices.Contains(Versions(), version) {
		return nil, fmt.Errorf("no ACP schema for protocol version %d (have %v)", version, Versions())
	}
	dir := fmt.Sprintf("v%d", version)
	stable, err := loadFile(dir + "/schema.json")
	if err != nil {
		return nil, err
	}
	unstable, err := loadFile(dir + "/schema.unstable.json")
	if err != nil {
		return nil, err
	}
	s := &Schema{version: version, stable: stable, unstable: unstable,
		unstableMethods: map[string]bool{}, unstableUpdates: map[string]bool{},
		printer: message.NewPrinter(language.English)}
	for m := range unstable.methods {
		if !stable.methods[m] {
			s.unstableMethods[m] = true
		}
	}
	for u := range unstable.updates {
		if !stable.updates[u] {
			s.unstableUpdates[u] = true
		}
	}
	return s, nil
}

func loadFile(name string) (*file, error) {
	data, err := fs.ReadFile(files, name)
	if err != nil {
		return nil, err
	}
	var doc struct {
		Defs map[string]struct {
			Side   string `json:"x-side"`
			Method string `json:"x-method"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	f := &file{url: "acpschema:///" + name, compiler: jsonschema.NewCompiler(),
		defs: map[string]string{}, methods: map[string]bool{}, updates: map[string]bool{},
		compiled: map[string]*jsonschema.Schema{}}
	if err := f.compiler.AddResource(f.url, inst); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	for def, d := range doc.Defs {
		if d.Method == "" || d.Side == "" {
			continue
		}
		for _, kind := range []string{"Request", "Notification", "Response"} {
			if strings.HasSuffix(def, kind) {
				f.defs[d.Side+" "+d.Method+" "+kind] = def
				f.methods[d.Method] = true
			}
		}
	}
	var updates struct {
		Defs struct {
			SessionUpdate struct {
				OneOf []struct {
					Properties struct {
						SessionUpdate struct {
							Const string `json:"const"`
						} `json:"sessionUpdate"`
					} `json:"properties"`
				} `json:"oneOf"`
			} `json:"SessionUpdate"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(data, &updates); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	for _, u := range updates.Defs.SessionUpdate.OneOf {
		if c := u.Properties.SessionUpdate.Const; c != "" {
			f.updates[c] = true
		}
	}
	return f, nil
}

// hasDef reports whether f has the definition name.
func (f *file) hasDef(name string) bool {
	_, err := f.def(name)
	return err == nil
}

// def compiles (once) the definition name of f.
func (f *file) def(name string) (*jsonschema.Schema, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if s, ok := f.compiled[name]; ok {
		return s, nil
	}
	s, err := f.compiler.Compile(f.url + "#/$defs/" + name)
	if err != nil {
		return nil, fmt.Errorf("compiling %s: %w", name, err)
	}
	f.compiled[name] = s
	return s, nil
}

// Version is the schema's protocol version.
func (s *Schema) Version() int { return s.version }

// HasMethod reports whether method is in the schema (stable or
// unstable) for frames that handler ("agent" or "client") receives.
func (s *Schema) HasMethod(handler, method string) bool {
	for _, f := range []*file{s.stable, s.unstable} {
		for _, kind := range []string{"Request", "Notification"} {
			if _, ok := f.defs[handler+" "+method+" "+kind]; ok {
				return true
			}
		}
	}
	return false
}

// Methods returns the schema's methods that handler ("agent" or
// "client") receives, stable ones and, with unstable, the unstable ones
// too, sorted.
func (s *Schema) Methods(handler string, unstable bool) []string {
	fs := []*file{s.stable}
	if unstable {
		fs = append(fs, s.unstable)
	}
	var out []string
	for _, f := range fs {
		for key := range f.defs {
			h, rest, _ := strings.Cut(key, " ")
			m, kind, _ := strings.Cut(rest, " ")
			if h == handler && kind != "Response" && !slices.Contains(out, m) {
				out = append(out, m)
			}
		}
	}
	slices.Sort(out)
	return out
}

// ErrUnknownMethod is wrapped by Validate's error for a request or
// notification whose method the schema does not give its receiver.
var ErrUnknownMethod = errors.New("not a method of the ACP schema")

// Violation is one place where a frame breaks the schema.
type Violation struct {
	// Path is a JSON pointer into the frame ("/params/update/status").
	Path string
	// Message says what is wrong there.
	Message string
}

// Error is a frame the schema rejects.
type Error struct {
	// Def is the schema definition checked ("SessionNotification").
	Def        string
	Violations []Violation
	err        error
}

func (e *Error) Error() string {
	if len(e.Violations) == 0 {
		return e.Def + ": " + e.err.Error()
	}
	var b strings.Builder
	b.WriteString(e.Def)
	for i, v := range e.Violations {
		if i == 3 {
			fmt.Fprintf(&b, "; and %d more", len(e.Violations)-3)
			break
		}
		fmt.Fprintf(&b, "; at %s: %s", v.Path, v.Message)
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.err }

// Unstable reports whether frame has a shape only the unstable schema
// has: an unstable method, or a session/update whose sessionUpdate kind
// is unstable (subagent_update, session_message in v1 of the 2.4.0 SDK).
func (s *Schema) Unstable(frame []byte) bool {
	var f struct {
		Method string `json:"method"`
		Params struct {
			Update struct {
				SessionUpdate string `json:"sessionUpdate"`
			} `json:"update"`
		} `json:"params"`
	}
	_ = json.Unmarshal(frame, &f)
	return s.unstableShape(f.Method, f.Params.Update.SessionUpdate)
}

func (s *Schema) unstableShape(method, update string) bool {
	return s.unstableMethods[method] || method == "session/update" && s.unstableUpdates[update]
}

// envelope is what Validate reads of a decoded frame.
type envelope struct {
	method       string
	hasMethod    bool
	hasID        bool
	isResponse   bool
	updateTag    string
	hasErrorPart bool
}

func envelopeOf(obj map[string]any) envelope {
	var e envelope
	m, ok := obj["method"].(string)
	e.method, e.hasMethod = m, ok
	_, e.hasID = obj["id"]
	_, hasResult := obj["result"]
	_, e.hasErrorPart = obj["error"]
	e.isResponse = !e.hasMethod && e.hasID && (hasResult || e.hasErrorPart)
	if params, ok := obj["params"].(map[string]any); ok {
		if upd, ok := params["update"].(map[string]any); ok {
			e.updateTag, _ = upd["sessionUpdate"].(string)
		}
	}
	return e
}

// Validate checks one frame sent by from. For a response, method is the
// method of the request it answers ("" when unknown: the response is
// checked against every response the sender's side may give). A
// request or notification with a method the schema does not give its
// receiver gets an error wrapping ErrUnknownMethod ('_'-prefixed
// extension methods included: the caller decides whether they count).
//
// Session link content blocks ({"type":"session","sessionId":...},
// standard since 2026-11-20 and newer than these files) are checked by
// hand and then left out of the schema check.
func (s *Schema) Validate(from Sender, method string, frame []byte) error {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(frame))
	if err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	obj, ok := doc.(map[string]any)
	if !ok {
		return errors.New("not a JSON-RPC object (a batch or a scalar)")
	}
	// The schema sees the last of two members with one name; a client
	// may read the first.
	if dup := duplicateMembers(frame); len(dup) > 0 {
		return &Error{Def: "JSON", Violations: dup, err: errors.New("duplicate members")}
	}
	if obj["jsonrpc"] != "2.0" {
		return &Error{Def: "JSON-RPC", Violations: []Violation{{Path: "/jsonrpc", Message: `must be "2.0"`}}, err: errors.New("bad jsonrpc")}
	}
	if bad := rootMembers(obj); len(bad) > 0 {
		return &Error{Def: "JSON-RPC", Violations: bad, err: errors.New("bad members")}
	}
	if bad := badSessionLinks(doc); len(bad) > 0 {
		return &Error{Def: "SessionReference", Violations: bad, err: errors.New("bad session link")}
	}
	withoutSessionLinks(doc)
	handler := string(from.other())
	env := envelopeOf(obj)
	f := s.stable
	if s.unstableShape(env.method, env.updateTag) {
		f = s.unstable
	}
	switch {
	case env.hasMethod:
		kind := "Request"
		if !env.hasID {
			kind = "Notification"
		}
		m := env.method
		def, ok := f.defs[handler+" "+m+" "+kind]
		if !ok {
			if _, other := f.defs[handler+" "+m+" "+otherKind(kind)]; other {
				return &Error{Def: m, Violations: []Violation{{Path: "/id", Message: kindMessage(kind)}}, err: errors.New("wrong kind")}
			}
			return fmt.Errorf("%s %q (%s -> %s): %w", strings.ToLower(kind), m, from, from.other(), ErrUnknownMethod)
		}
		if v := checkID(obj); v != nil {
			return &Error{Def: "RequestId", Violations: []Violation{*v}, err: errors.New("bad id")}
		}
		return s.check(f, def, obj["params"], "/params")
	case env.isResponse:
		if v := checkID(obj); v != nil {
			return &Error{Def: "RequestId", Violations: []Violation{*v}, err: errors.New("bad id")}
		}
		if e, ok := obj["error"]; ok {
			return s.check(s.stable, "Error", e, "/error")
		}
		responder := string(from)
		if def, ok := s.responseDef(responder, method); ok {
			return s.check(f, def.def, obj["result"], "/result")
		}
		whole := "AgentResponse"
		if responder == "client" {
			whole = "ClientResponse"
		}
		return s.check(f, whole, doc, "")
	}
	return fmt.Errorf("not a JSON-RPC request, notification or response")
}

// ValidateDef checks value, raw JSON, against the definition def (a $defs
// name) of the stable file, or of the unstable one when only it has def.
// It is for shapes Validate does not route by method and side, such as
// the conductor protocol's (x-side "proxy": InitializeProxyRequest,
// ProxySuccessorRequest, ...).
func (s *Schema) ValidateDef(def string, value []byte) error {
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(value))
	if err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	f := s.stable
	if !f.hasDef(def) {
		f = s.unstable
	}
	return s.check(f, def, inst, "")
}

type defRef struct{ def string }

// responseDef finds the response definition of method for responder,
// in the unstable file when only it has the method.
func (s *Schema) responseDef(responder, method string) (defRef, bool) {
	if method == "" {
		return defRef{}, false
	}
	for _, f := range []*file{s.stable, s.unstable} {
		if d, ok := f.defs[responder+" "+method+" Response"]; ok {
			return defRef{d}, true
		}
	}
	return defRef{}, false
}

func otherKind(kind string) string {
	if kind == "Request" {
		return "Notification"
	}
	return "Request"
}

func kindMessage(kind string) string {
	if kind == "Request" {
		return "the method is a notification: it must have no id"
	}
	return "the method is a request: it needs an id"
}

// checkID checks a request or response id: a string, an integer or
// null (RequestId).
func checkID(obj map[string]any) *Violation {
	id, ok := obj["id"]
	if !ok {
		return nil
	}
	switch x := id.(type) {
	case nil, string:
		return nil
	case json.Number:
		if _, err := x.Int64(); err == nil {
			return nil
		}
		return &Violation{Path: "/id", Message: "a request id must be a string, an integer or null, not " + x.String()}
	}
	return &Violation{Path: "/id", Message: fmt.Sprintf("a request id must be a string, an integer or null, not %T", id)}
}

func (s *Schema) check(f *file, def string, inst any, at string) error {
	sch, err := f.def(def)
	if err != nil {
		return err
	}
	err = sch.Validate(inst)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return &Error{Def: def, err: err}
	}
	return &Error{Def: def, Violations: s.leaves(ve, at), err: err}
}

// leaves flattens a validation error to the innermost failures, one per
// instance location (the first message there). An anyOf or oneOf is read
// as a reader would want it:
//
//   - alternatives that are all values the instance is not (an enum
//     spelled as consts, an optional field's null) become one violation
//     that lists them all;
//   - alternatives whose discriminator did not match (the const of a
//     member, as sessionUpdate's or a content block's type) are left out
//     when another one got further, so a bad tool_call_update names its
//     own field, not every other update; when none got further, one
//     violation at the discriminator lists the values it may have.
func (s *Schema) leaves(ve *jsonschema.ValidationError, at string) []Violation {
	var out []Violation
	seen := map[string]bool{}
	add := func(p, msg string) {
		if !seen[p] {
			seen[p] = true
			out = append(out, Violation{Path: p, Message: msg})
		}
	}
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			add(at+pointer(e.InstanceLocation), e.ErrorKind.LocalizedString(s.printer))
			return
		}
		causes := e.Causes
		if disjunction(e) {
			loc := pointer(e.InstanceLocation)
			if alts, got, ok := valueAlternatives(e, loc); ok {
				add(at+loc, mustBe(alts, got))
				return
			}
			var kept []*jsonschema.ValidationError
			tagLoc, tags, sameTag := "", []string(nil), true
			var tagGot any
			for _, c := range causes {
				l, want, got, ok := discriminator(c, loc)
				if !ok {
					kept = append(kept, c)
					continue
				}
				if tagLoc != "" && l != tagLoc {
					sameTag = false
				}
				tagLoc, tagGot = l, got
				if !slices.Contains(tags, want) {
					tags = append(tags, want)
				}
			}
			switch {
			case len(kept) > 0:
				causes = kept
			case sameTag && tagLoc != "":
				add(at+tagLoc, mustBe(tags, tagGot))
				return
			}
		}
		for _, c := range causes {
			walk(c)
		}
	}
	walk(ve)
	return out
}

// disjunction reports whether e is an anyOf or a oneOf that no
// alternative matched.
func disjunction(e *jsonschema.ValidationError) bool {
	switch k := e.ErrorKind.(type) {
	case *kind.AnyOf:
		return true
	case *kind.OneOf:
		return k.Subschemas == nil
	}
	return false
}

// wrapper reports whether e only groups the failures of one schema
// ($ref, allOf, a subschema).
func wrapper(e *jsonschema.ValidationError) bool {
	switch e.ErrorKind.(type) {
	case *kind.Group, *kind.AllOf, *kind.Reference:
		return true
	}
	return false
}

// valueAlternatives returns, when every alternative of e failed as a value
// at loc (a const, an enum, a type, through wrappers and nested
// disjunctions), what each alternative wanted (JSON values, or type
// names) and the value the instance has.
func valueAlternatives(e *jsonschema.ValidationError, loc string) (alts []string, got any, ok bool) {
	if pointer(e.InstanceLocation) != loc {
		return nil, nil, false
	}
	switch k := e.ErrorKind.(type) {
	case *kind.Const:
		return []string{jsonText(k.Want)}, k.Got, true
	case *kind.Enum:
		for _, w := range k.Want {
			alts = append(alts, jsonText(w))
		}
		return alts, k.Got, true
	case *kind.Type:
		for _, w := range k.Want {
			alts = append(alts, typeName(w))
		}
		return alts, typeOnly{k.Got}, true
	}
	if len(e.Causes) == 0 || !disjunction(e) && !(wrapper(e) && len(e.Causes) == 1) {
		return nil, nil, false
	}
	for _, c := range e.Causes {
		a, g, ok := valueAlternatives(c, loc)
		if !ok {
			return nil, nil, false
		}
		if _, only := g.(typeOnly); !only || got == nil {
			got = g // a value beats a type name
		}
		for _, x := range a {
			if !slices.Contains(alts, x) {
				alts = append(alts, x)
			}
		}
	}
	return alts, got, true
}

// typeOnly is the instance of a type failure: only its type is known.
type typeOnly struct{ name string }

// discriminator reports whether the alternative e failed a const on a
// member of the object at loc (through wrappers, not through a nested
// disjunction: that is a field's enum, not a discriminator), and returns
// the member's location, the value the const wanted and the one it got.
func discriminator(e *jsonschema.ValidationError, loc string) (string, string, any, bool) {
	if k, ok := e.ErrorKind.(*kind.Const); ok {
		l := pointer(e.InstanceLocation)
		if member, ok := strings.CutPrefix(l, loc+"/"); ok && member != "" && !strings.Contains(member, "/") {
			return l, jsonText(k.Want), k.Got, true
		}
		return "", "", nil, false
	}
	if !wrapper(e) {
		return "", "", nil, false
	}
	for _, c := range e.Causes {
		if l, w, g, ok := discriminator(c, loc); ok {
			return l, w, g, true
		}
	}
	return "", "", nil, false
}

// mustBe says what a value may be and what it is:
// `must be one of "a", "b", not "c"`. A null alternative is left out when
// there are others (a value that is no null fails an optional field's null
// alternative too: the others say why).
func mustBe(alts []string, got any) string {
	if i := slices.Index(alts, "null"); i >= 0 && len(alts) > 1 {
		alts = slices.Delete(slices.Clone(alts), i, i+1)
	}
	msg := "must be " + alts[0]
	if len(alts) > 1 {
		msg = "must be one of " + strings.Join(alts, ", ")
	}
	switch g := got.(type) {
	case nil:
		return msg
	case typeOnly:
		return msg + ", not " + typeName(g.name)
	}
	return msg + ", not " + jsonText(got)
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// typeName names a JSON type as a value of it: "a string", "null".
func typeName(t string) string {
	switch t {
	case "null":
		return "null"
	case "array", "integer", "object":
		return "an " + t
	}
	return "a " + t
}

func pointer(loc []string) string {
	var b strings.Builder
	for _, p := range loc {
		b.WriteByte('/')
		b.WriteString(escapePointer(p))
	}
	return b.String()
}

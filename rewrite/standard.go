package rewrite

import "github.com/sourcegraph/jsonrpc2"

// StandardMethods returns every method name of the ACP schema, version 1,
// stable and unstable: the agent methods, the client methods and the
// protocol method $/cancel_request (the method lists of meta.json and
// meta.unstable.json of the embedded schema, internal/acpschema; TestStandardMethods
// checks them against those files). A method outside this list that does
// not start with '_' is no method a client is expected to know (rules C13,
// V7).
func StandardMethods() []string {
	return []string{
		// agentMethods (client -> agent)
		"initialize", "authenticate", "logout",
		"session/new", "session/load", "session/set_mode", "session/set_config_option",
		"session/prompt", "session/cancel", "session/list", "session/delete",
		"session/fork", "session/resume", "session/close",
		"providers/list", "providers/set", "providers/disable",
		"nes/start", "nes/suggest", "nes/accept", "nes/reject", "nes/close",
		"document/didOpen", "document/didChange", "document/didClose", "document/didSave", "document/didFocus",
		// both directions
		"mcp/message",
		// clientMethods (agent -> client)
		"session/request_permission", "session/update",
		"fs/read_text_file", "fs/write_text_file",
		"terminal/create", "terminal/output", "terminal/release", "terminal/wait_for_exit", "terminal/kill",
		"mcp/connect", "mcp/disconnect",
		"elicitation/create", "elicitation/complete",
		// protocolMethods
		"$/cancel_request",
	}
}

// methodSet is a lookup of StandardMethods; each trigger index and module
// that needs one builds its own (no package-level state).
type methodSet map[string]struct{}

func newMethodSet() methodSet {
	s := make(methodSet, 64)
	for _, m := range StandardMethods() {
		s[m] = struct{}{}
	}
	return s
}

// unknown reports whether method (its bytes between the quotes, as on the
// wire) is neither standard nor '_'-prefixed. Escaped spellings are never
// standard: they are reported as unknown, for the module to decode.
func (s methodSet) unknown(method []byte) bool {
	if string(method) == "session/update" {
		return false // most agent frames: no hashing for them (hot path)
	}
	if len(method) > 0 && method[0] == '_' {
		return false
	}
	_, ok := s[string(method)]
	return !ok
}

// MethodFilter tells vendor methods from standard ones (rules C13, V7).
type MethodFilter struct{ set methodSet }

// NewMethodFilter returns a filter over StandardMethods.
func NewMethodFilter() MethodFilter { return MethodFilter{newMethodSet()} }

// Unknown reports whether method is neither an ACP schema method nor
// '_'-prefixed: a method that no client is expected to know.
func (m MethodFilter) Unknown(method string) bool { return m.set.unknown([]byte(method)) }

// UnknownBytes is Unknown for the bytes between a method's quotes as on
// the wire (the trigger scan's hot path: no string is made). Escaped
// spellings are never standard: they are unknown, for the module to decode.
func (m MethodFilter) UnknownBytes(method []byte) bool { return m.set.unknown(method) }

// RefuseMethod is the verdict of rules C13 and V7 for an agent's method
// that no client knows: the frame never reaches the client, and a request
// is answered by the proxy with -32601 under its own id. method is the
// frame's method, decoded.
func RefuseMethod(f *Frame, method string) Verdict {
	var v Verdict
	v.DropFrame()
	if id := f.ID(); id != nil {
		v.Send(f.From, ErrorResponse(id, jsonrpc2.CodeMethodNotFound, "method not found: "+method))
	}
	return v
}

package pipe

import (
	"bytes"
	"encoding/json"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
)

// Kind classifies a frame by its envelope.
type Kind uint8

const (
	// NotJSON is a line whose first non-blank byte is neither '{' nor '['
	// (rule F2).
	NotJSON Kind = iota
	// Request has a method and an id.
	Request
	// Notification has a method and no id.
	Notification
	// Response has a result or an error and no method.
	Response
	// Batch is a JSON array (not part of ACP v1; forwarded untouched).
	Batch
	// Invalid starts like a JSON object but is malformed or is no JSON-RPC
	// message.
	Invalid
)

var kindNames = [...]string{"not-json", "request", "notification", "response", "batch", "invalid"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "unknown"
}

// Envelope is what the proxy needs to know about a frame to route it: its
// kind, method and raw id. Peek computes it without decoding params or
// result, and without allocating.
type Envelope struct {
	Kind Kind
	// Method is the method string's characters: the bytes between its
	// quotes, or, when it has an escape ("session\/update"), the string
	// decoded (the one allocation Peek may make: a method a parser reads
	// the same is the same method).
	Method []byte
	// ID is the raw JSON of the id member, exactly as on the wire, or nil
	// when the frame has none.
	ID []byte
	// Error is true when a response carries an error member.
	Error bool
	// Params is the raw JSON of the params member (the last one, its key
	// compared decoded, as rawjson.Lookup does), or nil: modules read it
	// without walking the frame's top level again.
	Params []byte
}

// MethodIs reports whether the frame's method is m.
func (e *Envelope) MethodIs(m string) bool { return string(e.Method) == m }

// IsJSON reports whether a frame looks like JSON by rule F2: its first
// non-blank byte is '{' or '['.
func IsJSON(frame []byte) bool {
	c := FirstByte(frame)
	return c == '{' || c == '['
}

// Peek classifies frame. It walks the top level of the object only; values
// are skipped, never decoded, but for a method with an escape. Keys are
// compared decoded ("m\u0065thod" is the method), and of duplicate keys
// the last one counts, as a JSON parser reads the object.
func Peek(frame []byte) Envelope {
	var env Envelope
	switch FirstByte(frame) {
	case '[':
		env.Kind = Batch
		return env
	case '{':
	default:
		env.Kind = NotJSON
		return env
	}
	it, err := rawjson.NewObjectIter(frame)
	if err != nil {
		env.Kind = Invalid
		return env
	}
	var hasMethod, hasResult bool
	for {
		m, ok := it.Next()
		if !ok {
			break
		}
		key := m.Key
		if bytes.IndexByte(key, '\\') >= 0 { // an escaped spelling
			k, ok := rawjson.UnescapeKey(key)
			if !ok {
				return Envelope{Kind: Invalid}
			}
			key = []byte(k)
		}
		switch string(key) {
		case "method":
			env.Method, hasMethod = nil, false
			if len(m.Value) >= 2 && m.Value[0] == '"' {
				env.Method, hasMethod = m.Value[1:len(m.Value)-1], true
				if bytes.IndexByte(env.Method, '\\') >= 0 {
					s, ok := rawjson.DecodeString(m.Value)
					if !ok {
						return Envelope{Kind: Invalid}
					}
					env.Method = []byte(s)
				}
			}
		case "id":
			env.ID = m.Value
		case "result":
			hasResult = true
		case "error":
			hasResult = true
			env.Error = true
		case "params":
			env.Params = m.Value
		}
	}
	if it.Err() != nil || skipSpace(frame, it.Offset()) != len(frame) {
		return Envelope{Kind: Invalid}
	}
	// The id is echoed in replies the proxy writes: it must be a JSON
	// value (the skip above only finds its boundaries; "00" or "1x" would
	// make an invalid reply).
	if env.ID != nil && !json.Valid(env.ID) {
		return Envelope{Kind: Invalid}
	}
	switch {
	case hasMethod && env.ID != nil:
		env.Kind = Request
	case hasMethod:
		env.Kind = Notification
	case hasResult && env.ID != nil:
		env.Kind = Response
	default:
		env.Kind = Invalid
	}
	return env
}

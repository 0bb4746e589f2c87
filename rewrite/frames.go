package rewrite

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/acp-normalize/acp-normalize/pipe"
)

// ProxyIDPrefix starts the ids of requests the proxy sends itself (rule C12).
const ProxyIDPrefix = "acp-normalize:"

// ProxyID returns the raw JSON id of the proxy's n-th request:
// "acp-normalize:TOKEN:N", where TOKEN is unique to the proxy process (so
// that nested proxies tell their ids apart), or "acp-normalize:N" when
// token is empty (replaying a capture made before tokens, tests).
func ProxyID(token string, n uint64) []byte {
	id := append([]byte(`"`), ProxyIDPrefix...)
	if token != "" {
		id = append(append(id, token...), ':')
	}
	id = strconv.AppendUint(id, n, 10)
	return append(id, '"')
}

// Marshal encodes v as compact JSON without escaping <, > and &, and
// without a trailing newline.
func Marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}), nil
}

func rawOrMarshal(v any) ([]byte, error) {
	switch r := v.(type) {
	case nil:
		return nil, nil
	case json.RawMessage:
		return r, nil
	case []byte:
		return r, nil
	}
	return Marshal(v)
}

// Result returns a response frame that echoes the raw id of a request (the
// same JSON value byte for byte) with result, which may be raw JSON
// ([]byte or json.RawMessage) or a value to encode.
func Result(id []byte, result any) ([]byte, error) {
	res, err := rawOrMarshal(result)
	if err != nil {
		return nil, fmt.Errorf("encoding result: %w", err)
	}
	if res == nil {
		res = []byte("null")
	}
	if id == nil {
		id = []byte("null")
	}
	out := make([]byte, 0, 40+len(id)+len(res))
	out = append(out, `{"jsonrpc":"2.0","id":`...)
	out = append(out, id...)
	out = append(out, `,"result":`...)
	out = append(out, res...)
	return append(out, '}'), nil
}

// ErrorResponse returns an error response frame echoing the raw id, with a
// JSON-RPC error object (jsonrpc2.CodeMethodNotFound, ...).
func ErrorResponse(id []byte, code int64, message string) []byte {
	e, err := Marshal(&jsonrpc2.Error{Code: code, Message: message})
	if err != nil { // cannot happen for these field types
		e = []byte(`{"code":-32603,"message":"internal error"}`)
	}
	if id == nil {
		id = []byte("null")
	}
	out := make([]byte, 0, 40+len(id)+len(e))
	out = append(out, `{"jsonrpc":"2.0","id":`...)
	out = append(out, id...)
	out = append(out, `,"error":`...)
	out = append(out, e...)
	return append(out, '}')
}

// Notification returns a notification frame; params may be raw JSON or a
// value to encode, nil for none.
func Notification(method string, params any) ([]byte, error) {
	return RequestFrame(nil, method, params)
}

// RequestFrame returns a request frame with the raw JSON id (nil for a
// notification).
func RequestFrame(id []byte, method string, params any) ([]byte, error) {
	p, err := rawOrMarshal(params)
	if err != nil {
		return nil, fmt.Errorf("encoding params of %s: %w", method, err)
	}
	m, err := Marshal(method)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, 48+len(id)+len(m)+len(p))
	out = append(out, `{"jsonrpc":"2.0"`...)
	if id != nil {
		out = append(out, `,"id":`...)
		out = append(out, id...)
	}
	out = append(out, `,"method":`...)
	out = append(out, m...)
	if p != nil {
		out = append(out, `,"params":`...)
		out = append(out, p...)
	}
	return append(out, '}'), nil
}

// Get returns the raw JSON at path in frame.
func Get(frame []byte, path ...string) ([]byte, bool) { return pipe.Lookup(frame, path...) }

// Set returns a copy of the JSON object obj with the member at path set to
// the raw JSON value. Missing objects along the path are created; an
// existing member's value is replaced in place. Every other byte of obj is
// kept as it was (key order, spacing, escapes), so a vendor frame changed
// by Set differs from the original only where it was changed.
func Set(obj []byte, value []byte, path ...string) ([]byte, error) {
	if len(path) == 0 {
		return append([]byte(nil), value...), nil
	}
	var target pipe.Member
	found := false
	err := pipe.Members(obj, func(m pipe.Member) bool {
		if m.KeyIs(path[0]) {
			target, found = m, true // the last duplicate wins, as in encoding/json
		}
		return true
	})
	if err != nil {
		return nil, fmt.Errorf("set %v: %w", path, err)
	}
	if found {
		inner := value
		if len(path) > 1 {
			if pipe.FirstByte(target.Value) != '{' {
				return nil, fmt.Errorf("set %v: %q is not an object", path, path[0])
			}
			inner, err = Set(target.Value, value, path[1:]...)
			if err != nil {
				return nil, err
			}
		}
		out := make([]byte, 0, len(obj)-len(target.Value)+len(inner))
		out = append(out, obj[:target.ValueStart]...)
		out = append(out, inner...)
		return append(out, obj[target.ValueEnd:]...), nil
	}
	// Build the missing member {"path[0]": {"path[1]": ... value}} and
	// insert it before the closing brace.
	member, err := nest(value, path[1:])
	if err != nil {
		return nil, err
	}
	key, err := Marshal(path[0])
	if err != nil {
		return nil, err
	}
	end := bytes.LastIndexByte(obj, '}')
	if end < 0 {
		return nil, fmt.Errorf("set %v: not an object", path)
	}
	empty := true
	_ = pipe.Members(obj, func(pipe.Member) bool { empty = false; return false })
	out := make([]byte, 0, len(obj)+len(key)+len(member)+2)
	out = append(out, obj[:end]...)
	if !empty {
		out = append(out, ',')
	}
	out = append(out, key...)
	out = append(out, ':')
	out = append(out, member...)
	return append(out, obj[end:]...), nil
}

func nest(value []byte, path []string) ([]byte, error) {
	if len(path) == 0 {
		return value, nil
	}
	inner, err := nest(value, path[1:])
	if err != nil {
		return nil, err
	}
	key, err := Marshal(path[0])
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(key)+len(inner)+3)
	out = append(out, '{')
	out = append(out, key...)
	out = append(out, ':')
	out = append(out, inner...)
	return append(out, '}'), nil
}

// Delete returns a copy of obj without the member at path (every
// duplicate of its last key), keeping every other byte; obj itself when
// there is nothing to delete.
func Delete(obj []byte, path ...string) ([]byte, error) {
	if len(path) == 0 {
		return obj, nil
	}
	if len(path) > 1 {
		inner, ok := pipe.Lookup(obj, path[0])
		if !ok || pipe.FirstByte(inner) != '{' {
			return obj, nil
		}
		changed, err := Delete(inner, path[1:]...)
		if err != nil {
			return nil, err
		}
		if bytes.Equal(changed, inner) {
			return obj, nil
		}
		return Set(obj, changed, path[0])
	}
	var members []pipe.Member
	deleted := 0
	err := pipe.Members(obj, func(m pipe.Member) bool {
		members = append(members, m)
		if m.KeyIs(path[0]) {
			deleted++
		}
		return true
	})
	if err != nil {
		return nil, fmt.Errorf("delete %v: %w", path, err)
	}
	if deleted == 0 {
		return obj, nil
	}
	// Rebuild from the kept members: each keeps the separator that stood
	// before it, except the first kept one, which takes the place of the
	// first member.
	first, last := members[0], members[len(members)-1]
	out := make([]byte, 0, len(obj))
	out = append(out, obj[:first.KeyStart]...)
	kept := 0
	for i, m := range members {
		if m.KeyIs(path[0]) {
			continue
		}
		if kept > 0 {
			out = append(out, obj[members[i-1].ValueEnd:m.KeyStart]...)
		}
		out = append(out, obj[m.KeyStart:m.ValueEnd]...)
		kept++
	}
	return append(out, obj[last.ValueEnd:]...), nil
}

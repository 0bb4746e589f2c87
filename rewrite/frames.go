package rewrite

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
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

// Marshal is rawjson.Marshal (the proxy's advertisement uses it).
func Marshal(v any) ([]byte, error) { return rawjson.Marshal(v) }

// Set is rawjson.Set (the proxy's advertisement uses it).
func Set(obj []byte, value []byte, path ...string) ([]byte, error) {
	return rawjson.Set(obj, value, path...)
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
	return rawjson.Marshal(v)
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
	return response(id, "result", res), nil
}

// ErrorResponse returns an error response frame echoing the raw id, with a
// JSON-RPC error object (jsonrpc2.CodeMethodNotFound, ...).
func ErrorResponse(id []byte, code int64, message string) []byte {
	e, err := rawjson.Marshal(&jsonrpc2.Error{Code: code, Message: message})
	if err != nil { // cannot happen for these field types
		e = []byte(`{"code":-32603,"message":"internal error"}`)
	}
	return response(id, "error", e)
}

// response returns {"jsonrpc":"2.0","id":ID,"member":value} with the raw
// id (null when nil).
func response(id []byte, member string, value []byte) []byte {
	if id == nil {
		id = []byte("null")
	}
	out := make([]byte, 0, 32+len(id)+len(member)+len(value))
	out = append(out, `{"jsonrpc":"2.0","id":`...)
	out = append(out, id...)
	out = append(out, ',', '"')
	out = append(out, member...)
	out = append(out, '"', ':')
	out = append(out, value...)
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
	m := rawjson.Text(method)
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

// PeerInfo reads a side's name and version from the initialize exchange:
// v1's clientInfo or agentInfo member of obj ("params" or "result"), else
// v2's info.
func PeerInfo(frame []byte, obj, v1 string) (name, version string) {
	for _, member := range []string{v1, "info"} {
		if n, ok := rawjson.LookupString(frame, obj, member, "name"); ok {
			v, _ := rawjson.LookupString(frame, obj, member, "version")
			return n, v
		}
	}
	return "", ""
}

package acpschema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// rootMembers checks the members of a JSON-RPC message (rule P3: never a
// new root field): a request or notification has jsonrpc, id, method and
// params; a response jsonrpc, id and one of result or error.
func rootMembers(obj map[string]any) []Violation {
	_, hasMethod := obj["method"]
	_, hasResult := obj["result"]
	_, hasError := obj["error"]
	allowed := []string{"jsonrpc", "id", "method", "params"}
	var out []Violation
	switch {
	case hasMethod:
		for _, k := range []string{"result", "error"} {
			if _, ok := obj[k]; ok {
				out = append(out, Violation{Path: "/" + k, Message: fmt.Sprintf("a request or notification has no %q member", k)})
			}
		}
	case hasResult && hasError:
		out = append(out, Violation{Path: "/error", Message: `a response has "result" or "error", not both`})
		allowed = []string{"jsonrpc", "id", "result", "error"}
	default:
		allowed = []string{"jsonrpc", "id", "result", "error"}
	}
	var extra []string
	for k := range obj {
		if !slices.Contains(allowed, k) && k != "result" && k != "error" {
			extra = append(extra, k)
		}
	}
	slices.Sort(extra)
	for _, k := range extra {
		out = append(out, Violation{Path: "/" + escapePointer(k), Message: fmt.Sprintf("JSON-RPC has no member %q (allowed: %s)", k, strings.Join(allowed, ", "))})
	}
	return out
}

// duplicateMembers returns a violation for each member of an object in
// data whose name an earlier member of the same object has (after
// decoding escapes, as a parser compares them). data is valid JSON.
func duplicateMembers(data []byte) []Violation {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var out []Violation
	var value func(at string) error
	value = func(at string) error {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch tok {
		case json.Delim('{'):
			seen := map[string]bool{}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return err
				}
				key, _ := k.(string)
				p := at + "/" + escapePointer(key)
				if seen[key] {
					out = append(out, Violation{Path: p, Message: fmt.Sprintf("member %q appears more than once: clients differ in which one they read", key)})
				}
				seen[key] = true
				if err := value(p); err != nil {
					return err
				}
			}
			_, err = dec.Token()
			return err
		case json.Delim('['):
			for i := 0; dec.More(); i++ {
				if err := value(fmt.Sprintf("%s/%d", at, i)); err != nil {
					return err
				}
			}
			_, err = dec.Token()
			return err
		}
		return nil
	}
	_ = value("") // data was decoded once already: no error here
	return out
}

// escapePointer escapes a member name for a JSON pointer (RFC 6901).
func escapePointer(name string) string {
	return strings.ReplaceAll(strings.ReplaceAll(name, "~", "~0"), "/", "~1")
}

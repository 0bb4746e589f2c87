package acpschema

import "fmt"

// A session link is the content block {"type":"session","sessionId":ID}
// with an optional _meta object (SessionReference, standard since
// 2026-11-20; none of the embedded files has it yet).

// badSessionLinks returns a violation for each content block of type
// "session" that is not a well-formed session link.
func badSessionLinks(v any, at string) []Violation {
	var out []Violation
	switch x := v.(type) {
	case map[string]any:
		if x["type"] == "session" {
			if msg := linkProblem(x); msg != "" {
				out = append(out, Violation{Path: at, Message: msg})
			}
		}
		for k, e := range x {
			out = append(out, badSessionLinks(e, at+"/"+k)...)
		}
	case []any:
		for i, e := range x {
			out = append(out, badSessionLinks(e, fmt.Sprintf("%s/%d", at, i))...)
		}
	}
	return out
}

// linkProblem says what is wrong with a block of type "session", or "".
func linkProblem(x map[string]any) string {
	id, ok := x["sessionId"].(string)
	if !ok || id == "" {
		return `a session link needs a non-empty string "sessionId"`
	}
	for k, e := range x {
		switch k {
		case "type", "sessionId":
		case "_meta":
			if _, ok := e.(map[string]any); !ok && e != nil {
				return `a session link's "_meta" must be an object`
			}
		default:
			return fmt.Sprintf("a session link has no member %q", k)
		}
	}
	return ""
}

// isSessionLink reports whether v is a well-formed session link.
func isSessionLink(v any) bool {
	m, ok := v.(map[string]any)
	return ok && m["type"] == "session" && linkProblem(m) == ""
}

// withoutSessionLinks removes well-formed session links from every array.
func withoutSessionLinks(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = withoutSessionLinks(e)
		}
	case []any:
		out := x[:0]
		for _, e := range x {
			if isSessionLink(e) {
				continue
			}
			out = append(out, withoutSessionLinks(e))
		}
		return out
	}
	return v
}

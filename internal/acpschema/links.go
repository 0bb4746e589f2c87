package acpschema

import "fmt"

// A session link is the content block {"type":"session","sessionId":ID}
// with an optional _meta object (SessionReference, standard since
// 2026-11-20; none of the embedded files has it yet). It is tool call
// content: it may stand in the content array of a tool call (an object
// with a toolCallId: a tool_call, a tool_call_update, a permission
// request's toolCall), and nowhere else. Elsewhere it is left to the
// schema, which rejects it where content is typed (a prompt, a plan) and
// accepts it where values are free-form (_meta, rawInput).

// toolCallContent calls fn for each content array of a tool call in v,
// with its JSON pointer.
func toolCallContent(v any, at string, fn func(content []any, at string) []any) {
	switch x := v.(type) {
	case map[string]any:
		if _, ok := x["toolCallId"]; ok {
			if c, ok := x["content"].([]any); ok {
				x["content"] = fn(c, at+"/content")
			}
		}
		for k, e := range x {
			toolCallContent(e, at+"/"+k, fn)
		}
	case []any:
		for i, e := range x {
			toolCallContent(e, fmt.Sprintf("%s/%d", at, i), fn)
		}
	}
}

// badSessionLinks returns a violation for each block of type "session"
// in a tool call's content that is not a well-formed session link.
func badSessionLinks(doc any) []Violation {
	var out []Violation
	toolCallContent(doc, "", func(content []any, at string) []any {
		for i, e := range content {
			if m, ok := e.(map[string]any); ok && m["type"] == "session" {
				if msg := linkProblem(m); msg != "" {
					out = append(out, Violation{Path: fmt.Sprintf("%s/%d", at, i), Message: msg})
				}
			}
		}
		return content
	})
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

// withoutSessionLinks removes the well-formed session links from the
// tool calls' content arrays of doc, which the schema files do not know.
func withoutSessionLinks(doc any) any {
	toolCallContent(doc, "", func(content []any, _ string) []any {
		out := content[:0]
		for _, e := range content {
			if !isSessionLink(e) {
				out = append(out, e)
			}
		}
		return out
	})
	return doc
}

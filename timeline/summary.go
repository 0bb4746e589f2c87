package timeline

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
	"github.com/acp-normalize/acp-normalize/internal/terminal"
	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/rewrite/meta"
)

// textLimit is how many characters of a text a summary shows.
const textLimit = 72

// maxTracked bounds the request ids remembered to name responses by their
// request's method (rule P6's spirit: a long capture must not grow it).
const maxTracked = 1024

// idKey names a request by the side its response travels to and its id's
// pipe.IDKey (ids are only unique per direction; an answer may spell its
// request's id another way, F6).
type idKey struct {
	to pipe.Side
	id string
}

// methods remembers the method of recent requests, to name responses,
// and knows the modules that describe vendor methods.
type methods struct {
	byID  map[idKey]string
	order []idKey
	mods  []rewrite.Module
}

func newMethods(mods []rewrite.Module) *methods {
	return &methods{byID: make(map[idKey]string), mods: mods}
}

// vendorDetail describes a vendor method's params by the module that
// handles it, or "".
func (m *methods) vendorDetail(method string, frame []byte) string {
	for i := range m.mods {
		mod := &m.mods[i]
		if mod.Summarize != nil && mod.Handles(method) {
			params, _ := rawjson.Lookup(frame, "params")
			return mod.Summarize(method, params, quote)
		}
	}
	return ""
}

// request notes a request travelling to side to.
func (m *methods) request(to pipe.Side, id []byte, method string) {
	k := idKey{to: to.Other(), id: pipe.IDKey(string(id))}
	if _, ok := m.byID[k]; !ok {
		m.order = append(m.order, k)
	}
	m.byID[k] = method
	if len(m.order) > maxTracked {
		delete(m.byID, m.order[0])
		m.order = m.order[1:]
	}
}

// response returns the method of the request a response travelling to
// side to answers, or "".
func (m *methods) response(to pipe.Side, id []byte) string {
	return m.byID[idKey{to: to, id: pipe.IDKey(string(id))}]
}

// observe notes a frame travelling to side to, if it is a request.
func (m *methods) observe(to pipe.Side, frame []byte) {
	env := pipe.Peek(frame)
	if env.Kind == pipe.Request {
		m.request(to, env.ID, string(env.Method))
	}
}

// summary is a one-line description of a frame.
type summary struct {
	// head is the method, or "result #ID method" / "error #ID method".
	head string
	// detail describes the content, possibly "".
	detail string
	// tag is the sessionUpdate tag of a session/update, else "".
	tag string
	// session is the sessionId of a session/update.
	session string
	// text is the text of a chunk update.
	text    string
	isError bool
}

// summarize describes a frame travelling to side to.
func summarize(frame []byte, to pipe.Side, ms *methods) summary {
	env := pipe.Peek(frame)
	switch env.Kind {
	case pipe.NotJSON:
		return summary{head: "non-JSON line", detail: quote(string(frame))}
	case pipe.Batch:
		return summary{head: "batch", detail: fmt.Sprintf("%d bytes", len(frame))}
	case pipe.Invalid:
		return summary{head: "invalid frame", detail: quote(string(frame))}
	}
	var msg struct {
		Method string         `json:"method"`
		Params map[string]any `json:"params"`
		Result any            `json:"result"`
		Error  *struct {
			Code    json.Number `json:"code"`
			Message string      `json:"message"`
		} `json:"error"`
	}
	dec := json.NewDecoder(bytes.NewReader(frame))
	dec.UseNumber()
	if err := dec.Decode(&msg); err != nil {
		return summary{head: "invalid frame", detail: err.Error()}
	}
	switch env.Kind {
	case pipe.Response:
		method := ms.response(to, env.ID)
		if msg.Error != nil {
			s := summary{head: joinNonEmpty("error #"+string(env.ID), method), isError: true}
			s.detail = strings.TrimSpace(string(msg.Error.Code) + " " + quote(msg.Error.Message))
			return s
		}
		return summary{head: joinNonEmpty("result #"+string(env.ID), method), detail: describeResult(method, msg.Result)}
	case pipe.Request:
		s := describeCall(msg.Method, msg.Params)
		s.detail = joinNonEmpty(s.detail, ms.vendorDetail(msg.Method, frame))
		s.head = msg.Method + " #" + string(env.ID)
		return s
	default:
		s := describeCall(msg.Method, msg.Params)
		s.detail = joinNonEmpty(s.detail, ms.vendorDetail(msg.Method, frame))
		s.head = msg.Method
		if s.tag != "" {
			s.head += " " + s.tag
		}
		return s
	}
}

// count says "1 todo", "2 todos", "3 entries".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	if strings.HasSuffix(noun, "y") {
		return strconv.Itoa(n) + " " + strings.TrimSuffix(noun, "y") + "ies"
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

func joinNonEmpty(parts ...string) string {
	var out []string
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, " ")
}

// describeCall describes a request's or notification's params.
func describeCall(method string, p map[string]any) summary {
	var s summary
	var d []string
	switch method {
	case "initialize":
		d = append(d, "protocol "+str(p, "protocolVersion"))
		if name := str(get(p, "clientInfo"), "name"); name != "" {
			d = append(d, "client "+joinNonEmpty(name, str(get(p, "clientInfo"), "version")))
		}
	case "session/new":
		d = append(d, "cwd "+str(p, "cwd"))
	case "session/load", "session/resume", "session/close", "session/cancel":
		d = append(d, "session "+str(p, "sessionId"))
	case "session/set_mode":
		d = append(d, "mode "+str(p, "modeId"))
	case "session/prompt":
		d = append(d, quote(blocksText(list(p, "prompt"))))
	case "session/update":
		u := get(p, "update")
		s.tag = str(u, "sessionUpdate")
		s.session = str(p, "sessionId")
		d = describeUpdate(&s, u)
	case "session/request_permission":
		tc := get(p, "toolCall")
		d = append(d, toolCallWords(tc)...)
		var opts []string
		for _, o := range list(p, "options") {
			om, _ := o.(map[string]any)
			opts = append(opts, fmt.Sprintf("%s (%s)", quote(str(om, "name")), str(om, "kind")))
		}
		d = append(d, "options: "+strings.Join(opts, ", "))
	case "fs/read_text_file", "fs/write_text_file":
		d = append(d, str(p, "path"))
	case "terminal/create":
		d = append(d, quote(strings.TrimSpace(str(p, "command")+" "+joinList(list(p, "args")))))
	case "elicitation/create":
		d = append(d, quote(str(p, "message")))
	}
	s.detail = strings.Join(nonEmpty(d), " ")
	return s
}

func describeUpdate(s *summary, u map[string]any) []string {
	var d []string
	switch s.tag {
	case "agent_message_chunk", "agent_thought_chunk", "user_message_chunk":
		s.text = blockText(get(u, "content"))
		d = append(d, quote(s.text))
	case "tool_call", "tool_call_update":
		d = append(d, toolCallWords(u)...)
		if st := str(get(get(get(u, "_meta"), meta.Key), meta.SubagentMember), "status"); st != "" {
			d = append(d, "[subagent "+st+"]")
		}
		if p := str(get(get(u, "_meta"), meta.Key), meta.ParentMember); p != "" {
			d = append(d, "[parent "+p+"]")
		}
	case "plan":
		entries := list(u, "entries")
		var es []string
		for _, e := range entries {
			em, _ := e.(map[string]any)
			es = append(es, statusMark(str(em, "status"))+" "+quote(str(em, "content")))
		}
		d = append(d, count(len(entries), "entry"))
		if len(es) > 0 {
			d = append(d, strings.Join(es, " · "))
		}
	case "available_commands_update":
		d = append(d, count(len(list(u, "availableCommands")), "command"))
	case "current_mode_update":
		d = append(d, str(u, "currentModeId"))
	case "session_info_update":
		d = append(d, quote(str(u, "title")))
	case "usage_update":
		d = append(d, str(u, "used")+"/"+str(u, "size"))
	case "config_option_update":
		d = append(d, count(len(list(u, "configOptions")), "option"))
	case "subagent_update":
		d = append(d, "child "+str(u, "sessionId"), quote(str(u, "title")), str(get(u, "state"), "state"))
	case "session_message":
		d = append(d, str(u, "senderSessionId")+" → "+str(u, "recipientSessionId"), quote(blocksText(list(u, "content"))))
	}
	if s.tag != "tool_call" && s.tag != "tool_call_update" {
		if p := str(get(get(u, "_meta"), meta.Key), meta.ParentMember); p != "" {
			d = append(d, "[parent "+p+"]")
		} else if p, where := vendorParent(get(u, "_meta")); p != "" {
			d = append(d, "["+where+" parent "+p+"]")
		}
	}
	return d
}

// vendorParent finds the link of a subagent's frame to its launch call
// that an agent writes in its own _meta, before any module: a
// parentToolCallId or parentToolUseId member of _meta or of one of its
// objects. where is the object's key ("_meta" for _meta itself); the
// first key in sorted order wins.
func vendorParent(m map[string]any) (p, where string) {
	parent := func(o map[string]any) string {
		if p := str(o, "parentToolCallId"); p != "" {
			return p
		}
		return str(o, "parentToolUseId")
	}
	if p := parent(m); p != "" {
		return p, "_meta"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if p := parent(get(m, k)); p != "" && k != meta.Key {
			return p, k
		}
	}
	return "", ""
}

// toolCallWords describes a tool call: id, title, kind, status, name.
func toolCallWords(tc map[string]any) []string {
	d := []string{str(tc, "toolCallId")}
	if t, ok := tc["title"].(string); ok {
		d = append(d, quote(t))
	}
	d = append(d, str(tc, "kind"), str(tc, "status"))
	if n := str(tc, "name"); n != "" {
		d = append(d, "name="+n)
	}
	return d
}

func statusMark(status string) string {
	switch status {
	case "completed":
		return "[x]"
	case "in_progress":
		return "[~]"
	case "cancelled":
		return "[-]"
	}
	return "[ ]"
}

// describeResult describes a result by the method it answers.
func describeResult(method string, r any) string {
	m, _ := r.(map[string]any)
	switch method {
	case "initialize":
		d := []string{"protocol " + str(m, "protocolVersion")}
		if ai := get(m, "agentInfo"); ai != nil {
			d = append(d, "agent "+joinNonEmpty(str(ai, "name"), str(ai, "version")))
		}
		if an := get(get(get(m, "agentCapabilities"), "_meta"), meta.Key); an != nil {
			d = append(d, "normalized "+joinNonEmpty(str(an, "version"), "["+joinList(list(an, "modules"))+"]"))
		}
		return strings.Join(d, ", ")
	case "session/new", "session/load":
		if sid := str(m, "sessionId"); sid != "" {
			return "session " + sid
		}
	case "session/prompt":
		return "stopReason " + str(m, "stopReason")
	case "session/request_permission":
		o := get(m, "outcome")
		if oid := str(o, "optionId"); oid != "" {
			return str(o, "outcome") + " " + oid
		}
		return str(o, "outcome")
	}
	if o := get(m, "outcome"); o != nil { // Cursor's {"outcome":{"outcome":KIND}}
		return "outcome " + str(o, "outcome")
	}
	if m == nil {
		return compact(r)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return "{" + strings.Join(keys, ", ") + "}"
}

func get(m map[string]any, key string) map[string]any {
	v, _ := m[key].(map[string]any)
	return v
}

func list(m map[string]any, key string) []any {
	v, _ := m[key].([]any)
	return v
}

// str returns a scalar member as text ("" when absent or not a scalar).
func str(m map[string]any, key string) string {
	switch v := m[key].(type) {
	case string:
		return v
	case json.Number:
		return v.String()
	case bool:
		return strconv.FormatBool(v)
	}
	return ""
}

func joinList(vs []any) string {
	var out []string
	for _, v := range vs {
		if s, ok := v.(string); ok {
			out = append(out, s)
		}
	}
	return strings.Join(out, ",")
}

func nonEmpty(ss []string) []string {
	out := ss[:0]
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// blockText returns a content block's text, or its type in brackets.
func blockText(b map[string]any) string {
	if b == nil {
		return ""
	}
	if t, ok := b["text"].(string); ok {
		return t
	}
	return "[" + str(b, "type") + "]"
}

func blocksText(bs []any) string {
	var sb strings.Builder
	for _, b := range bs {
		bm, _ := b.(map[string]any)
		sb.WriteString(blockText(bm))
	}
	return sb.String()
}

// quote returns s in double quotes, on one line, cut to textLimit
// characters.
func quote(s string) string {
	if s == "" {
		return ""
	}
	return `"` + terminal.Line(s, textLimit) + `"`
}

func compact(v any) string {
	b, err := rawjson.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}

// runeLen is the display length of s in runes.
func runeLen(s string) int { return utf8.RuneCountInString(s) }

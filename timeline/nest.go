package timeline

import (
	"fmt"
	"strings"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
	"github.com/acp-normalize/acp-normalize/internal/terminal"
	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/route"
)

// nesting follows the child sessions (Subagent Sessions) the client is
// told of, from what reaches it: a subagent_update announces a child on
// its parent session, a {"type":"session"} content block links it to its
// launch call. The pretty timeline draws a child's frames indented under
// the launch call that started it, one level per generation, with a
// header line when the child's first frame is shown.
type nesting struct {
	children map[string]*childSession
	calls    map[string]string // toolCallId -> the title the client has
	// own are the sessions the client created (a session/new answer) or
	// named (session/load, session/resume): never a child, whatever the
	// agent announces (S7).
	own map[string]bool
}

// maxIndent is the deepest nesting drawn as indentation: a deeper child
// is drawn at that depth, its header says how deep it is, so that a chain
// of thousands of generations does not cost each line its length.
const maxIndent = 16

// childSession is a child session the client was told of.
type childSession struct {
	parent string
	depth  int
	title  string
	call   string // the launch call's toolCallId, when linked
	state  string // its last state ("running", "idle end_turn", ...)
	shown  bool   // its header line was written
}

func newNesting() *nesting {
	return &nesting{children: map[string]*childSession{}, calls: map[string]string{}, own: map[string]bool{}}
}

// observe learns from the frames of s that reach the client.
func (n *nesting) observe(s *route.Step) {
	if s.Kind == route.StepFrame && s.From == pipe.Client {
		if env := pipe.Peek(s.In); env.Kind == pipe.Request && (env.MethodIs("session/load") || env.MethodIs("session/resume")) {
			if sid, ok := rawjson.LookupString(env.Params, "sessionId"); ok {
				n.own[sid] = true
			}
		}
	}
	for _, o := range s.Outs {
		if o.To == pipe.Client {
			n.observeFrame(o.Frame)
		}
	}
}

func (n *nesting) observeFrame(frame []byte) {
	env := pipe.Peek(frame)
	if env.Kind == pipe.Response {
		if sid, ok := rawjson.LookupString(frame, "result", "sessionId"); ok {
			n.own[sid] = true
		}
		return
	}
	if !env.MethodIs("session/update") {
		return
	}
	sid, _ := rawjson.LookupString(env.Params, "sessionId")
	upd, _ := rawjson.Lookup(env.Params, "update")
	tag, _ := rawjson.LookupString(upd, "sessionUpdate")
	switch tag {
	case "subagent_update":
		id, _ := rawjson.LookupString(upd, "sessionId")
		if id == "" || id == sid || n.own[id] {
			return
		}
		c, ok := n.children[id]
		if !ok {
			c = &childSession{parent: sid, depth: n.depth(sid) + 1}
			n.children[id] = c
		}
		if t, ok := rawjson.LookupString(upd, "title"); ok && t != "" {
			c.title = t
		}
		if st, ok := rawjson.Lookup(upd, "state"); ok {
			c.state, _ = rawjson.LookupString(st, "state")
			if r, ok := rawjson.LookupString(st, "stopReason"); ok {
				c.state += " " + r
			}
		}
	case "tool_call", "tool_call_update":
		id, _ := rawjson.LookupString(upd, "toolCallId")
		if t, ok := rawjson.LookupString(upd, "title"); ok && id != "" {
			n.calls[id] = t
		}
		content, _ := rawjson.Lookup(upd, "content")
		_ = rawjson.Elements(content, func(el []byte) bool {
			if typ, _ := rawjson.LookupString(el, "type"); typ == "session" {
				if child, _ := rawjson.LookupString(el, "sessionId"); n.children[child] != nil {
					n.children[child].call = id
				}
			}
			return true
		})
	}
}

// depth returns how deep session sid is: 0 for a session the client
// made, 1 for its children, and so on.
func (n *nesting) depth(sid string) int {
	if c, ok := n.children[sid]; ok {
		return c.depth
	}
	return 0
}

// sessionOf returns the session a step's frame is in as the client sees
// it: that of its first frame to the client, else its own.
func sessionOf(s *route.Step) string {
	for _, o := range s.Outs {
		if o.To == pipe.Client {
			if sid, ok := rawjson.LookupString(o.Frame, "params", "sessionId"); ok {
				return sid
			}
			break
		}
	}
	sid, _ := rawjson.LookupString(s.In, "params", "sessionId")
	return sid
}

// prefix returns the indentation of a frame of session sid: one bar per
// level.
func (n *nesting) prefix(sid string) string {
	return strings.Repeat("│ ", min(n.depth(sid), maxIndent))
}

// header returns the line that opens child session sid in the timeline,
// the first time one of its frames is shown ("" after that, and for a
// session that is no child).
func (n *nesting) header(sid string) string {
	c, ok := n.children[sid]
	if !ok || c.shown {
		return ""
	}
	c.shown = true
	h := strings.Repeat("│ ", min(c.depth, maxIndent)-1) + "┌ child session " + sid
	if c.depth > maxIndent {
		h += fmt.Sprintf(" (%d generations deep)", c.depth)
	}
	if c.call != "" {
		h += " of tool call " + c.call
		if t := n.calls[c.call]; t != "" {
			h += " " + quote(t)
		}
	} else if c.title != "" {
		h += " " + quote(c.title)
	}
	return terminal.Line(h, 300)
}

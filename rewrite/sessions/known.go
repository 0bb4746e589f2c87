package sessions

import (
	"github.com/acp-normalize/acp-normalize/internal/rawjson"
	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/rewrite/table"
)

// Whose session is this: the module decides from what the client and the
// proxy did on the connection, never from what the agent says of a
// session or from the shape of its id.
//
//   - The client's sessions are those a session/new or session/fork
//     answer gave it, and those it named itself (session/load,
//     session/resume, session/prompt, ...). Such a session is never a
//     child: the agent cannot hide it from the client (S7) nor take it
//     out of its own tree (P6, S4) by announcing it as one.
//   - The proxy's children are those it made on this connection (S4):
//     a client request naming one is answered by the proxy (S5); one
//     naming an agent's child with an id of the same shape reaches the
//     agent (S3).

// ask is a client request whose answer the module reads: a session/new
// or session/fork (the answer names a session of the client's) or a
// session/prompt (its answer ends the turn, S4).
type ask struct {
	method  string
	session string // the prompt's session
	cancel  bool   // the client sent session/cancel for it
}

// newKnownTables makes the tables of the client's sessions and of the
// client requests whose answers the module reads (P6: capped, dropped
// with the session).
func newKnownTables(env rewrite.Env) (*table.Table[string, struct{}], *table.Table[string, ask]) {
	known := rewrite.NewTable(env, table.Config[string, struct{}]{Name: "client sessions",
		Size:    func(k string, _ struct{}) int64 { return int64(len(k)) },
		Session: func(k string, _ struct{}) string { return k }})
	asks := rewrite.NewTable(env, table.Config[string, ask]{Name: "client requests awaiting an answer",
		Size:    func(k string, a ask) int64 { return int64(len(k) + len(a.method) + len(a.session)) },
		Session: func(_ string, a ask) string { return a.session }})
	return known, asks
}

// clientKnows reports whether sid is one of the client's own sessions.
func (r *rewriter) clientKnows(sid string) bool {
	_, ok := r.known.Get(sid)
	return ok
}

// learn records sid as one of the client's sessions, the newest it
// named (P6 keeps the last ones named: the session the client prompts
// every turn is never the one forgotten); a child the module had hidden
// under that id is the client's from now on (S7).
func (r *rewriter) learn(sid string) {
	if sid == "" || r.made(sid) {
		return
	}
	r.known.Put(sid, struct{}{})
	if ch, ok := r.children.Get(sid); ok && ch.hidden {
		ch.hidden = false // still its parent's child (P6: it goes with it)
		r.unwatch(sid)
	}
}

// own records sid, which a session/new or session/fork answer gave the
// client, as its own (learn): never a child, even one the agent
// announced before answering, so its tree is its own from now on (S7,
// P6: closing the session that announced it drops none of its state).
// One pass, oldest first, re-roots the descendants announced after
// their parents.
func (r *rewriter) own(sid string) {
	r.learn(sid)
	ch, ok := r.children.Get(sid)
	if !ok || ch.synthesized {
		return
	}
	r.children.Delete(sid)
	r.unwatch(sid)
	tree := map[string]bool{sid: true}
	var moved []string
	r.children.Each(func(id string, c *child) bool {
		if tree[c.parent] {
			c.root = sid
			tree[id] = true
			moved = append(moved, id)
		}
		return true
	})
	for _, id := range moved {
		r.children.Resize(id) // the root's length counts (P6)
	}
}

// named records sid, which the client named in a request or
// notification, as one of its sessions (learn), unless it is a child an
// opted-in client was told of: naming one (a cancel, a prompt to the
// subagent) keeps it a child, so its later announcements and its end
// still reach the client (S3, J1).
func (r *rewriter) named(sid string) {
	if ch, ok := r.children.Get(sid); ok && r.optedIn && !ch.hidden {
		return
	}
	r.learn(sid)
}

// made reports whether sid is a child session the proxy made on this
// connection (S4): what the module holds, not the id's shape (S5).
func (r *rewriter) made(sid string) bool {
	ch, ok := r.children.Get(sid)
	return ok && ch.synthesized
}

// mayBeChild reports whether the agent may announce kid as a child of
// sid: never the session it is announced on, a session of the client's
// (S7), nor a child the proxy made (S5: the agent has no such session).
func (r *rewriter) mayBeChild(sid, kid string) bool {
	return kid != "" && kid != sid && !r.clientKnows(kid) && !r.made(kid)
}

// answersWatch is the trigger that hands the module the agent's answer
// to a session/new or session/fork while one is outstanding: the answer
// names the session, and nothing else marks it.
const answersWatch = watchAllTrigger

// clientAsks records a client request whose answer the module reads,
// by the value of its id.
func (r *rewriter) clientAsks(f *rewrite.Frame, method, sid string) {
	id := f.ID()
	if id == nil {
		return
	}
	r.asks.Put(pipe.IDKey(string(id)), ask{method: method, session: sid})
	if method != "session/prompt" && !r.watchingAnswers {
		r.watchingAnswers = r.env.Watch(answersWatch)
	}
}

// agentAnswer reads the agent's answer to a client request the module
// asked for: a session the client now knows, or the end of a turn.
func (r *rewriter) agentAnswer(f *rewrite.Frame, env *pipe.Envelope) (rewrite.Verdict, error) {
	if env.ID == nil || r.asks.Len() == 0 {
		return rewrite.Verdict{}, nil
	}
	key := pipe.IDKey(string(env.ID))
	a, ok := r.asks.Get(key)
	if !ok {
		return rewrite.Verdict{}, nil
	}
	r.asks.Delete(key)
	defer r.stopWatchingAnswers()
	switch a.method {
	case "session/prompt":
		// An error answer ends the turn too: no stop reason.
		stop, _ := rawjson.LookupString(f.Raw, "result", "stopReason")
		return r.turnEnded(a.session, a.cancel || stop == "cancelled"), nil
	default:
		if sid, ok := rawjson.LookupString(f.Raw, "result", "sessionId"); ok {
			r.own(sid)
		}
	}
	return rewrite.Verdict{}, nil
}

// stopWatchingAnswers unwatches answersWatch when no session/new or
// session/fork is outstanding (unless every frame naming a session is
// watched anyway, S7).
func (r *rewriter) stopWatchingAnswers() {
	if !r.watchingAnswers {
		return
	}
	waiting := false
	r.asks.Each(func(_ string, a ask) bool {
		waiting = a.method != "session/prompt"
		return !waiting
	})
	if waiting {
		return
	}
	r.watchingAnswers = false
	if !r.watchingAll {
		r.env.Unwatch(answersWatch)
	}
}

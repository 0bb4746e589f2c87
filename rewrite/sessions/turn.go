package sessions

import (
	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/rewrite/launch"
)

// cancelled marks the turn in flight on sid as cancelled by the client
// (session/cancel), for the children its answer ends (S4).
func (r *rewriter) cancelled(sid string) {
	if sid == "" {
		return
	}
	var keys []string
	r.asks.Each(func(k string, a ask) bool {
		if a.method == "session/prompt" && a.session == sid {
			keys = append(keys, k)
		}
		return true
	})
	for _, k := range keys {
		a, _ := r.asks.Get(k)
		a.cancel = true
		r.asks.Put(k, a)
	}
}

// turnEnded ends, when the agent answers the client's session/prompt on
// sid, every child the proxy made for a foreground launch of that turn
// whose call never got an end (S4): the turn is over, so is the
// subagent. The child goes idle, with stopReason cancelled when the
// turn was cancelled (the answer says so, or the client sent
// session/cancel), else with none: the proxy does not know how it ended.
// A background child runs on as the agent says. The states follow the
// answer (P2).
func (r *rewriter) turnEnded(sid string, cancel bool) rewrite.Verdict {
	var v rewrite.Verdict
	if !r.optedIn {
		return v
	}
	st := childState{State: "idle"}
	if cancel {
		st.StopReason = "cancelled"
	}
	var ended []launch.Key
	r.calls.Each(func(k launch.Key, cl *call) bool {
		if k.Session == sid && cl.child != "" && !cl.own && cl.state.State == "running" && !cl.background() {
			ended = append(ended, k)
		}
		return true
	})
	for _, k := range ended {
		cl, _ := r.calls.Get(k)
		cl.state = st
		var frames [][]byte
		if r.air == airNative && !r.airSpawned(cl.child) {
			// AIR never got the spawn (the call never worked): it is
			// named by what the call says, before its end (J1).
			if s, err := cl.sub(); err == nil {
				r.airSpawn(&frames, cl, s)
			}
		}
		u := subagentUpdate{SessionUpdate: "subagent_update", SessionID: cl.child, State: &st, airState: "disconnected"}
		if cancel {
			u.airState = "cancelled"
		}
		r.send(&frames, cl.session, u)
		for _, b := range frames {
			v.Send(pipe.Client, b)
		}
	}
	return v
}

// background reports whether the call's subagent runs on after its
// launch (a background launch, or launched: S4 keeps it running).
func (cl *call) background() bool {
	if cl.status.Detached() {
		return true
	}
	s, err := cl.sub()
	return err == nil && s.Background != nil && *s.Background
}

package route

import (
	"fmt"

	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite"
)

type proxyRequest struct {
	mod    int
	to     pipe.Side
	cookie any
}

// proxyAnswer reports whether a response from side from answers one of
// the proxy's own outstanding requests (C12), and returns it. Only such
// answers are the proxy's: a response that merely has the proxy's id
// prefix (a client that took up the proxy's id scheme for its own
// requests, a second answer to a request already answered, an answer the
// client sends after the proxy forgot the request) is forwarded like any
// other. r.mu must be held.
func (r *Router) proxyAnswer(from pipe.Side, rawID []byte) (string, proxyRequest, bool) {
	key, _, own := r.ownProxyID(rawID)
	if !own {
		return "", proxyRequest{}, false
	}
	pr, ok := r.proxyReqs[key]
	if !ok || pr.to != from {
		r.log.Debug("response under a proxy-like id that answers no open proxy request; forwarded", "rule", "C12", "id", string(rawID), "from", from.String())
		return "", proxyRequest{}, false
	}
	return key, pr, true
}

// handleProxyResponse consumes a response to one of the proxy's own
// outstanding requests (C12): the module that sent the request gets it.
// r.mu must be held.
func (r *Router) handleProxyResponse(dst []Out, f *rewrite.Frame, key string, pr proxyRequest) []Out {
	r.record(f.Seq, pipe.OpDrop, f.From.Other(), nil)
	delete(r.proxyReqs, key)
	v := r.callResponse(pr, f)
	return r.appendOutputs(dst, f.From, f.Seq, pr.mod, v.Out)
}

// maxProxyRequests bounds the proxy's own requests awaiting an answer
// (P6), as many as a module's table holds: a client that leaves more
// unanswered does not answer them.
const maxProxyRequests = 1024

// forgetOldestProxyRequest forgets the oldest outstanding proxy request
// (P6) as if its side had answered it with an error: its module hears so,
// answers what waits on it (Cursor's request gets "cancelled") and lets go
// of what it held. A late answer to it is forwarded, as any answer to no
// outstanding proxy request (C12). r.mu must be held.
func (r *Router) forgetOldestProxyRequest(dst []Out, seq int64) []Out {
	for len(r.proxyOrder) > 0 {
		key := r.proxyOrder[0]
		r.proxyOrder = r.proxyOrder[1:]
		pr, ok := r.proxyReqs[key]
		if !ok {
			continue // answered already
		}
		delete(r.proxyReqs, key)
		r.forgotten++
		log := r.log.Debug
		if r.forgotten == 1 {
			log = r.log.Info
		}
		log("the client leaves the proxy's requests unanswered: the oldest is forgotten", "rule", "P6",
			"id", key, "outstanding", len(r.proxyReqs), "forgotten", r.forgotten)
		f := rewrite.NewFrame(pr.to, rewrite.ErrorResponse([]byte(key), -32603, "acp-normalize: no answer; request forgotten"), seq)
		v := r.callResponse(pr, f)
		dst = r.appendOutputs(dst, pr.to, seq, pr.mod, v.Out)
		break
	}
	return dst
}

// compactProxyOrder drops the keys of answered requests from proxyOrder
// once they are most of it: its length stays within twice the open
// requests (plus a little), at a cost of O(1) per request sent. r.mu must
// be held.
func (r *Router) compactProxyOrder() {
	if len(r.proxyOrder) <= 2*len(r.proxyReqs)+64 {
		return
	}
	kept := make([]string, 0, len(r.proxyReqs))
	for _, k := range r.proxyOrder {
		if _, ok := r.proxyReqs[k]; ok {
			kept = append(kept, k)
		}
	}
	r.proxyOrder = kept
}

func (r *Router) callResponse(pr proxyRequest, f *rewrite.Frame) (v rewrite.Verdict) {
	m := r.mods[pr.mod]
	h, ok := m.rw.(rewrite.ResponseHandler)
	if !ok {
		return rewrite.Verdict{}
	}
	defer func() {
		if p := recover(); p != nil {
			r.failOpen(m, f, fmt.Errorf("panic: %v", p))
			v = rewrite.Verdict{}
		}
	}()
	v, err := h.HandleResponse(pr.cookie, f)
	if err != nil {
		r.failOpen(m, f, err)
	}
	return v
}

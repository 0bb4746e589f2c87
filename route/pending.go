package route

import (
	"bytes"
	"slices"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite"
)

// maxPending bounds the client requests tracked for rule F6 (P6): a
// client never has this many requests open with a working agent; past it,
// new requests are not tracked (they get no -32603 if the agent dies).
const maxPending = 1 << 14

// trackClientRequest remembers a client request until the agent answers
// it (F6; at most maxPending, P6). r.mu must be held.
func (r *Router) trackClientRequest(env *pipe.Envelope) {
	r.skipClientID(env.ID)
	if len(r.pending) >= maxPending {
		return
	}
	rawID := string(env.ID)
	key := pipe.IDKey(rawID)
	r.pending[key] = rawID
	if env.MethodIs("initialize") {
		r.initIDs[key] = struct{}{}
	}
}

// skipClientID keeps the proxy's later request ids clear of a client
// request id spelled like one of them, so that no answer is ever
// ambiguous. The proxy's requests to the client are told
// apart from the client's requests to the agent by the side an answer
// comes from; this also covers requests a module sends to the agent.
// r.mu must be held.
func (r *Router) skipClientID(rawID []byte) {
	if !bytes.HasPrefix(rawID, r.idPrefix[:2]) && bytes.IndexByte(rawID, '\\') < 0 {
		return // the common case: an integer, or a string not starting "a
	}
	if _, n, own := r.ownProxyID(rawID); own && n < maxSkippedID && n > r.nextID {
		r.nextID = n
	}
}

// AgentGone returns a -32603 error response for every client request the
// agent has not answered (rule F6), and forgets them.
func (r *Router) AgentGone(dst []Out) []Out {
	r.mu.Lock()
	defer r.mu.Unlock()
	keys := make([]string, 0, len(r.pending))
	for key := range r.pending {
		keys = append(keys, key)
	}
	slices.Sort(keys)
	for _, key := range keys {
		frame := rewrite.ErrorResponse([]byte(r.pending[key]), jsonrpc2.CodeInternalError, "agent exited")
		r.record(0, pipe.OpReply, pipe.Client, frame)
		dst = append(dst, Out{To: pipe.Client, Frame: frame, Op: pipe.OpReply})
		delete(r.pending, key)
	}
	return dst
}

// Pending returns how many client requests await the agent's answer.
func (r *Router) Pending() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.pending)
}

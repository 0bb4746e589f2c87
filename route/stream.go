package route

import (
	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite/table"
	"github.com/acp-normalize/acp-normalize/route/trigger"
)

// Long frames (F3). A frame longer than the relay's read window is not
// read whole before it is routed: the router decides on its first window
// (its head) whether anything may need it whole. If nothing does, it
// passes on piece by piece as it arrives, in memory bounded by the window,
// and the router follows it (StreamEnvelope, the trigger scan) only for
// its bookkeeping: an answer to a client request is forgotten at its last
// piece (F6), a client request remembered as soon as its id and method
// have come. What is held whole:
//
//   - a frame with a module's trigger in its head (the module may rewrite
//     it), up to the connection's byte budget (P6): past that it passes
//     unchanged, like a frame no module claims, and no module sees it;
//   - an agent response (or a frame whose kind the head does not tell)
//     while the client's initialize is unanswered (its answer gets the
//     advertisement, rule M), and the client's initialize;
//   - a client response that may answer one of the proxy's own requests
//     (its id is the proxy's, or is not in the head while the proxy has a
//     request open to the client, C12): it is the module's, not the agent's.
//
// With --record a forwarded or dropped long frame is recorded in pieces
// too, as a text record redacted as it comes (pipe.CaptureWriter.BeginText),
// one at a time: a long frame from the other side meanwhile is held and
// recorded whole.
//
// A trigger that comes only after the head cannot claim the frame: its
// first bytes are gone. Such a frame passes unchanged and the module does
// not see it; the router logs it (F3). A head of blanks only is no JSON
// (F2).

// LongAction is what happens to a long frame, decided on its head.
type LongAction uint8

const (
	// LongForward: the frame passes unchanged, written piece by piece.
	LongForward LongAction = iota
	// LongHold: the relay assembles the frame (up to HoldLimit) and hands
	// it to Handle.
	LongHold
	// LongDrop: a line that is not JSON, dropped (F2): its pieces are read
	// and thrown away.
	LongDrop
)

// boundaryReach is how far past the trigger index's reach the scan of a
// long frame's pieces overlaps them: the method trigger reads the
// method's value past its own end.
const boundaryReach = 256

// Long is the router's view of one long frame from BeginLong to EndLong.
// The zero value is ready; the relay keeps one per side and reuses it.
type Long struct {
	from    pipe.Side
	x       *trigger.Index
	env     pipe.StreamEnvelope
	late    uint64 // triggers found after the head
	tail    []byte // the last bytes scanned, for the boundary scan
	edge    []byte // tail and the start of the next piece
	n       int64
	forward bool
	rec     bool // recorded in pieces
	tracked bool // the client request is remembered (F6)
}

// Bytes returns how many bytes of the frame the router has seen.
func (l *Long) Bytes() int64 { return l.n }

// HoldLimit is how many bytes of a long frame the relay holds for
// LongHold (P6): the connection's byte budget.
func (r *Router) HoldLimit() int {
	if r.cfg.MaxHeldBytes > 0 {
		return int(r.cfg.MaxHeldBytes)
	}
	return table.DefaultBytes
}

// BeginLong decides, on its head, what becomes of a long frame from side
// from (see above). For LongForward and LongDrop the relay feeds the rest
// to LongPiece and calls EndLong; for LongHold it calls Handle with the
// frame whole, or Spill when the frame outgrows HoldLimit.
func (r *Router) BeginLong(from pipe.Side, head []byte, l *Long) LongAction {
	*l = Long{from: from, x: r.triggers.Load(), tail: l.tail[:0], edge: l.edge[:0], env: pipe.StreamEnvelope{}}
	l.env.Write(head)
	l.n = int64(len(head))
	l.keepTail(head)
	if first := l.env.First(); first != '{' && first != '[' {
		seq, ok := r.recordLong(l, head)
		if !ok {
			return LongHold
		}
		r.handleNonJSON(from, head, seq, nil)
		r.log.Debug("the line above is longer than the read window: passed on or dropped as it arrives", "rule", "F3", "from", from.String())
		if r.cfg.NonJSON == ForwardNonJSON {
			l.forward = true
			return LongForward
		}
		return LongDrop
	}
	act := r.decideLong(l, head)
	if act == LongForward {
		if _, ok := r.recordLong(l, head); !ok {
			l.forward = false
			return LongHold
		}
	}
	return act
}

// recordLong starts the capture record of a long frame that is not held,
// with its first bytes, and returns its sequence number. ok is false when
// the capture is recording another frame in pieces (one from the other
// side): this one is then held and recorded whole (up to the P6 budget).
func (r *Router) recordLong(l *Long, head []byte) (seq int64, ok bool) {
	if r.cfg.Capture == nil {
		return r.seq.Add(1), true
	}
	if seq, ok = r.cfg.Capture.BeginText(l.from); ok {
		l.rec = true
		r.cfg.Capture.TextPiece(head)
	}
	return seq, ok
}

// decideLong decides about a long frame that looks like JSON.
func (r *Router) decideLong(l *Long, head []byte) LongAction {
	from := l.from
	r.mu.Lock()
	defer r.mu.Unlock()
	if l.x.Match(head)&modulesMask&^r.inner != 0 && !r.v2.Load() {
		return LongHold
	}
	switch {
	case from == pipe.Agent && len(r.initIDs) > 0 && !l.env.HasMethod:
		return LongHold
	case from == pipe.Client && l.env.HasMethod && string(l.env.Method) == "initialize":
		return LongHold
	case from == pipe.Client && !l.env.HasMethod && r.mayAnswerProxy(l.env.ID):
		return LongHold
	}
	l.forward = true
	r.trackLong(l)
	return LongForward
}

// trackLong remembers a client request as soon as its id and method have
// come (F6): the relay may block passing the rest on to an agent that does
// not read, and the agent's exit must still answer it. r.mu must be held.
func (r *Router) trackLong(l *Long) {
	if l.from != pipe.Client || l.tracked || l.env.Kind() != pipe.Request {
		return
	}
	l.tracked = true
	env := l.env.Envelope()
	r.trackClientRequest(&env)
}

// mayAnswerProxy reports whether a client frame with id rawID (nil: not
// known yet) may answer one of the proxy's open requests to the client.
// r.mu must be held.
func (r *Router) mayAnswerProxy(rawID []byte) bool {
	if rawID == nil {
		for _, pr := range r.proxyReqs {
			if pr.to == pipe.Client {
				return true
			}
		}
		return false
	}
	key, _, own := r.ownProxyID(rawID)
	pr, ok := r.proxyReqs[key]
	return own && ok && pr.to == pipe.Client
}

// Spill turns a held long frame that outgrew HoldLimit into a forwarded
// one: held is what the relay holds of it (the head first), which it
// passes on now, and the rest piece by piece (P6: no module sees it).
func (r *Router) Spill(l *Long, held []byte) {
	r.log.Warn("a frame a module may claim is longer than the connection's byte budget: passed on unchanged, no module sees it",
		"rule", "P6", "from", l.from.String(), "held", len(held))
	l.forward = true
	if _, ok := r.recordLong(l, held[:l.n]); !ok {
		// Neither in pieces (another frame is) nor whole (too long).
		r.cfg.Capture.LeaveOut()
	}
	r.LongPiece(l, held[l.n:])
}

// LongPiece follows the next piece of a forwarded or dropped long frame.
func (r *Router) LongPiece(l *Long, piece []byte) {
	l.n += int64(len(piece))
	l.env.Write(piece)
	if l.rec {
		r.cfg.Capture.TextPiece(piece)
	}
	if !l.forward {
		return
	}
	if l.from == pipe.Client && !l.tracked && l.env.Kind() == pipe.Request {
		r.mu.Lock()
		r.trackLong(l)
		r.mu.Unlock()
	}
	// A trigger split across the pieces matches in the edge: the end of
	// the last piece and the start of this one.
	reach := l.x.Reach() + boundaryReach
	l.edge = append(append(l.edge[:0], l.tail...), piece[:min(len(piece), reach)]...)
	l.late |= l.x.Match(l.edge) | l.x.Match(piece)
	l.keepTail(piece)
}

func (l *Long) keepTail(piece []byte) {
	reach := l.x.Reach() + boundaryReach
	if len(piece) >= reach {
		l.tail = append(l.tail[:0], piece[len(piece)-reach:]...)
		return
	}
	l.tail = append(l.tail, piece...)
	if len(l.tail) > reach {
		l.tail = l.tail[len(l.tail)-reach:]
	}
}

// EndLong does the bookkeeping of a forwarded long frame, before its last
// piece is written (the answer to a request cannot come before the
// request has been read whole): an agent's answer forgets the client
// request (F6), a client request is remembered.
func (r *Router) EndLong(l *Long) {
	if l.rec {
		r.cfg.Capture.EndText(false)
		l.rec = false
	}
	if !l.forward || l.env.Kind() == pipe.NotJSON {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if late := l.late & modulesMask &^ r.inner; late != 0 && !r.v2.Load() {
		r.log.Debug("a module's trigger came after the first window of a long frame: it had passed on already, unchanged, and no module saw it",
			"rule", "F3", "from", l.from.String(), "modules", r.modNames(late), "bytes", l.n)
	}
	env := l.env.Envelope()
	if env.ID == nil {
		if l.env.TooLong {
			r.log.Debug("a long frame's id is longer than the proxy keeps: not tracked", "rule", "P6", "from", l.from.String())
		}
		return
	}
	switch {
	case l.from == pipe.Agent && env.Kind == pipe.Response:
		delete(r.pending, pipe.IDKey(string(env.ID)))
	case l.from == pipe.Client:
		r.trackLong(l)
	}
}

// AbortLong ends a long frame cut off by a failed read: its capture
// record ends, marked cut; nothing else is done (no bookkeeping for a
// frame that never ended).
func (r *Router) AbortLong(l *Long) {
	if l.rec {
		r.cfg.Capture.EndText(true)
		l.rec = false
	}
}

// modNames names the modules of mask.
func (r *Router) modNames(mask uint64) []string {
	var names []string
	for i, m := range r.mods {
		if mask&(1<<i) != 0 {
			names = append(names, m.mod.Name)
		}
	}
	return names
}

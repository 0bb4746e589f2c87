package route

import (
	"log/slog"

	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/route/trigger"
)

// scan returns the modules a frame triggers and whether it may answer a
// client request (it has an id and a result or error member): one pass of
// the trigger index finds both, from where the frame stops sharing the
// envelope of the side's last untriggered frame (in a chunk storm, only
// the text is scanned).
func (r *Router) scan(from pipe.Side, raw []byte) (matched uint64, mayAnswer bool) {
	found := r.triggers.Load().MatchMemo(raw, &r.memos[from])
	return found & modulesMask, found&maybeResponse == maybeResponse
}

// buildIndex returns the trigger index of the modules, the router's own
// triggers and the watched ones, numbered gen (the memos of an older
// index start over, see trigger.Memo).
func (r *Router) buildIndex(gen uint64) *trigger.Index {
	x := trigger.New(r.cfg.Modules)
	x.Add(`"id"`, bitID)
	x.Add(`"result"`, bitResult)
	x.Add(`"error"`, bitResult)
	for t, bits := range r.watched {
		for i := range r.mods {
			if bits&(1<<i) != 0 {
				x.Add(t, uint(i))
			}
		}
	}
	x.SetGen(gen)
	return x
}

// maxWatched bounds the triggers all modules of a connection watch
// together (P6: each watched trigger costs every frame a little).
const maxWatched = 64

// watcher is one module's rewrite.Watcher. Its methods run inside the
// module's calls, so r.mu is held.
type watcher struct {
	r   *Router
	bit uint64
	log *slog.Logger
}

func (w *watcher) Watch(trigger string) bool {
	r := w.r
	if trigger == "" {
		return false
	}
	if r.watched[trigger]&w.bit != 0 {
		return true
	}
	if _, ok := r.watched[trigger]; !ok && len(r.watched) >= maxWatched {
		w.log.Debug("trigger not watched: the connection watches the most it may", "rule", "P6", "max", maxWatched)
		return false
	}
	if r.watched == nil {
		r.watched = map[string]uint64{}
	}
	r.watched[trigger] |= w.bit
	r.rebuild()
	return true
}

// rebuild swaps in an index with the watched triggers as they now are;
// before NewRouter has built the first one (a watch from a module's New),
// that first one will have them.
func (r *Router) rebuild() {
	if old := r.triggers.Load(); old != nil {
		r.triggers.Store(r.buildIndex(old.Gen() + 1))
	}
}

func (w *watcher) Unwatch(trigger string) {
	r := w.r
	bits, ok := r.watched[trigger]
	if !ok || bits&w.bit == 0 {
		return
	}
	if bits &^= w.bit; bits == 0 {
		delete(r.watched, trigger)
	} else {
		r.watched[trigger] = bits
	}
	r.rebuild()
}

// Bits of the trigger index that the router uses itself, above the
// modules' bits: a frame with an id and a result or error member may
// answer a client request, so it needs the router's bookkeeping.
const (
	bitID     = 63
	bitResult = 62
	// maybeResponse has both bits.
	maybeResponse = 1<<bitID | 1<<bitResult
	modulesMask   = 1<<bitResult - 1
)

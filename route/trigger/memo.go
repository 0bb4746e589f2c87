package trigger

import (
	"bytes"
	"encoding/binary"
	"math/bits"
)

// memoPrefix is how much of a frame a Memo keeps: the envelope of
// a message chunk (jsonrpc, method, session id, update kind) and more.
const memoPrefix = 256

// Memo remembers the start of the last frame in which a
// Index found nothing. Consecutive frames of a stream share most of
// their envelope (a chunk storm differs only in the text), and a trigger
// that lies wholly inside a prefix a frame shares with a frame that had
// none cannot be there either: MatchMemo scans only from where the frames
// start to differ (less the longest trigger). One memo per stream; not
// safe for concurrent use.
type Memo struct {
	prefix [memoPrefix]byte
	n      int
	frames uint // untriggered frames seen
	// methods are the method keys in prefix (offset, and the end of what
	// the method trigger read after it in the frame the memo was taken
	// from); more than fit: methodsAll is false, and the scan starts at
	// the first one not kept.
	methods    [4][2]int
	nMethods   int
	methodsAll bool
	// respell is 1 + the offset of the first quote in prefix where the
	// scan looked for a trigger's other spellings, 0 for none: what
	// that check reads has no fixed length, so a frame that shares the
	// prefix past it is scanned again from there.
	respell int
	// gen is the Index.gen the memo was made with.
	gen uint64
}

// MatchMemo is Match, skipping the part of frame that m shows holds no
// trigger, and updating m.
func (x *Index) MatchMemo(frame []byte, m *Memo) uint64 {
	if m.gen != x.gen {
		// Made with other triggers: what it says held none may hold
		// one of this index's.
		*m = Memo{gen: x.gen}
	}
	from, same := 0, 0
	var mask uint64
	note := len(frame) // the first candidate quote of other spellings
	if len(x.plain) == 0 {
		same = commonPrefix(frame, m.prefix[:m.n])
		from = max(0, same-x.reach+1)
		if x.hasMethod {
			from = min(from, m.methodReadFrom(same))
		}
		if m.respell > 0 && m.respell-1 < same {
			from = min(from, m.respell-1)
		}
		if from == max(0, same-x.reach+1) && from < same {
			// The quotes just before the frames differ: only a trigger
			// that reaches past the shared prefix can start there. With
			// long triggers (23 bytes) this window holds a chunk's
			// `"type":"text","text":"`, whose quotes would each cost a
			// search (all modules cost what none costs).
			mask = x.matchWindow(frame, from, same, &note)
			from = same
		}
	}
	mask |= x.matchFrom(frame, from, &note)
	if mask == 0 {
		m.frames++
		if same >= memoKeep && m.frames%memoReseed != 0 {
			// The shared envelope: kept as it is, no copy. What the
			// memo held past it was this frame's predecessor's text.
			m.n = same
		} else {
			// Start over from this frame (now and then, so that a memo
			// shrunk by one odd frame grows back).
			m.n = copy(m.prefix[:], frame)
			if x.hasMethod {
				m.findMethods(frame)
			}
		}
		// Before from, the prefix holds no candidate: the memo's first
		// one, if shared, lowered from to it.
		m.respell = 0
		if note < m.n {
			m.respell = note + 1
		}
	}
	return mask
}

// matchWindow is matchFrom over the quotes at offsets from to same (less
// than x.reach bytes), where frame shares its first same bytes with a
// frame that had no trigger: there only a trigger whose bytes reach past
// same can match, or the method trigger (what it reads past its end is
// checked by the caller, methodReadFrom), or another spelling (what its
// check reads may reach past same: it is always made).
func (x *Index) matchWindow(frame []byte, from, same int, note *int) uint64 {
	var mask uint64
	for i := from; i < same && i+2 < len(frame); i++ {
		if frame[i] != '"' {
			continue
		}
		if g := x.group[uint16(frame[i+1])<<8|uint16(frame[i+2])]; g != 0 {
			mask = x.matchGroup(frame, i, g, mask, same, note)
		}
	}
	return mask
}

// memoKeep is the shortest shared prefix a memo shrinks to rather than
// starting over from the new frame: enough to be an envelope.
const memoKeep = 64

// memoReseed: one untriggered frame in this many starts the memo over.
const memoReseed = 64

// methodReadFrom returns where the scan must start so that the method
// trigger, which reads the method's value past its own end, is checked
// again where what it read is not all inside the shared prefix (same
// bytes): there the frame may differ from the memo's.
func (m *Memo) methodReadFrom(same int) int {
	from := same
	if !m.methodsAll && m.nMethods < len(m.methods) {
		from = 0 // not scanned (the memo predates the method trigger)
	}
	for _, mk := range m.methods[:m.nMethods] {
		if mk[0]+len(methodKey) <= same && mk[1] > same {
			from = min(from, mk[0])
		}
	}
	if !m.methodsAll && m.nMethods == len(m.methods) {
		from = min(from, m.methods[len(m.methods)-1][0]+len(methodKey))
	}
	return from
}

// findMethods records the method keys in the memo's prefix of frame.
func (m *Memo) findMethods(frame []byte) {
	m.nMethods, m.methodsAll = 0, true
	for off := 0; ; {
		k := bytes.Index(frame[off:m.n], []byte(methodKey))
		if k < 0 {
			return
		}
		q := off + k
		if m.nMethods == len(m.methods) {
			m.methodsAll = false
			return
		}
		m.methods[m.nMethods] = [2]int{q, q + len(methodKey) + methodReadLen(frame[q+len(methodKey):])}
		m.nMethods++
		off = q + len(methodKey)
	}
}

// methodReadLen returns how many bytes of rest unknownMethodAt examines;
// one more than rest holds when it ran off its end (a longer frame would
// be read further).
func methodReadLen(rest []byte) int {
	i := skipSpace(rest, 0)
	if i >= len(rest) {
		return len(rest) + 1
	}
	if rest[i] != ':' {
		return i + 1
	}
	i = skipSpace(rest, i+1)
	if i >= len(rest) {
		return len(rest) + 1
	}
	if rest[i] != '"' {
		return i + 1
	}
	end := bytes.IndexByte(rest[i+1:], '"')
	if end < 0 {
		return len(rest) + 1
	}
	return i + 1 + end + 1
}

// commonPrefix returns the length of the longest common prefix of a and b.
func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	for ; i+8 <= n; i += 8 {
		if d := binary.LittleEndian.Uint64(a[i:]) ^ binary.LittleEndian.Uint64(b[i:]); d != 0 {
			return i + bits.TrailingZeros64(d)/8
		}
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

package rewrite

import (
	"bytes"
	"encoding/binary"
	"math/bits"
)

// memoPrefix is how much of a frame a TriggerMemo keeps: the envelope of
// a message chunk (jsonrpc, method, session id, update kind) and more.
const memoPrefix = 256

// TriggerMemo remembers the start of the last frame in which a
// TriggerIndex found nothing. Consecutive frames of a stream share most of
// their envelope (a chunk storm differs only in the text), and a trigger
// that lies wholly inside a prefix a frame shares with a frame that had
// none cannot be there either: MatchMemo scans only from where the frames
// start to differ (less the longest trigger). One memo per stream; not
// safe for concurrent use.
type TriggerMemo struct {
	prefix [memoPrefix]byte
	n      int
	frames uint // untriggered frames seen
}

// MatchMemo is Match, skipping the part of frame that m shows holds no
// trigger, and updating m.
func (x *TriggerIndex) MatchMemo(frame []byte, m *TriggerMemo) uint64 {
	from, same := 0, 0
	if len(x.plain) == 0 {
		same = commonPrefix(frame, m.prefix[:m.n])
		from = max(0, same-x.longest+1)
		if x.hasMethod {
			from = min(from, x.methodReadFrom(frame, same))
		}
	}
	mask := x.matchFrom(frame, from)
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
// again if that value reaches past the shared prefix (same bytes). Only
// the last "method" key of the prefix can: an earlier one's string value
// closes before the next unescaped quote.
func (x *TriggerIndex) methodReadFrom(frame []byte, same int) int {
	q := bytes.LastIndex(frame[:same], []byte(methodKey))
	if q < 0 {
		return same
	}
	rest := frame[q+len(methodKey):]
	if q+len(methodKey)+methodReadLen(rest) <= same {
		return same
	}
	return q
}

// methodReadLen returns how many bytes of rest unknownMethodAt examines.
func methodReadLen(rest []byte) int {
	i := skipSpace(rest, 0)
	if i >= len(rest) || rest[i] != ':' {
		return min(i+1, len(rest))
	}
	i = skipSpace(rest, i+1)
	if i >= len(rest) || rest[i] != '"' {
		return min(i+1, len(rest))
	}
	end := bytes.IndexByte(rest[i+1:], '"')
	if end < 0 {
		return len(rest)
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

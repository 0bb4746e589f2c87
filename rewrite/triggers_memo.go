package rewrite

import (
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
}

// MatchMemo is Match, skipping the part of frame that m shows holds no
// trigger, and updating m.
func (x *TriggerIndex) MatchMemo(frame []byte, m *TriggerMemo) uint64 {
	from := 0
	if len(x.plain) == 0 {
		same := commonPrefix(frame, m.prefix[:m.n])
		from = max(0, same-x.longest+1)
	}
	mask := x.matchFrom(frame, from)
	if mask == 0 {
		m.n = copy(m.prefix[:], frame)
	}
	return mask
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

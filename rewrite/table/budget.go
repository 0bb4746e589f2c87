package table

// Budget caps the bytes held by the tables that share it (one
// connection). Not safe for concurrent use: a connection's rewriters run
// one frame at a time.
type Budget struct {
	max    int64
	used   int64
	seq    uint64
	tables []member
}

// member is what a budget needs of a table of any type.
type member interface {
	oldestSeq() (uint64, bool)
	evictOldest(cap string)
}

// NewBudget returns a budget of max bytes; DefaultBytes when max <= 0.
func NewBudget(max int64) *Budget {
	if max <= 0 {
		max = DefaultBytes
	}
	return &Budget{max: max}
}

// Used returns the bytes held by the budget's tables.
func (b *Budget) Used() int64 { return b.used }

// Max returns the budget's cap.
func (b *Budget) Max() int64 { return b.max }

func (b *Budget) next() uint64 {
	b.seq++
	return b.seq
}

// enforce drops the oldest entry of all the budget's tables until the
// bytes held fit.
func (b *Budget) enforce() {
	for b.used > b.max {
		var oldest member
		var oldestSeq uint64
		for _, t := range b.tables {
			if s, ok := t.oldestSeq(); ok && (oldest == nil || s < oldestSeq) {
				oldest, oldestSeq = t, s
			}
		}
		if oldest == nil {
			return
		}
		oldest.evictOldest("bytes")
	}
}

package table

import (
	"context"
	"log/slog"
)

// DefaultEntries is the default cap on the entries of one table.
const DefaultEntries = 1024

// DefaultBytes is the default cap on the bytes held by the tables that
// share a Budget (one connection).
const DefaultBytes = 64 << 20

// Config describes a table.
type Config[K comparable, V any] struct {
	// Name says what the table holds, for the log line of a drop.
	Name string
	// Entries caps the number of entries; DefaultEntries when zero.
	Entries int
	// Budget is the byte budget shared with the connection's other
	// tables; a private budget of DefaultBytes when nil.
	Budget *Budget
	// Size returns the bytes an entry holds (its strings and raw JSON);
	// entries count zero bytes when nil.
	Size func(K, V) int64
	// Session returns an entry's session, for DropSession; nil when
	// entries belong to no session.
	Session func(K, V) string
	// Describe returns log attributes for a dropped entry; the key when
	// nil.
	Describe func(K, V) []any
	// Logger gets the debug line of each drop; none when nil.
	Logger *slog.Logger
}

// Table is an insertion-ordered map with caps (see the package doc).
// Putting a key again replaces its value and makes it the newest.
type Table[K comparable, V any] struct {
	cfg        Config[K, V]
	m          map[K]*node[K, V]
	head, tail *node[K, V] // oldest, newest
	bytes      int64
}

type node[K comparable, V any] struct {
	key        K
	val        V
	size       int64
	seq        uint64 // when it was put, in the budget's order
	prev, next *node[K, V]
}

// New returns an empty table.
func New[K comparable, V any](cfg Config[K, V]) *Table[K, V] {
	if cfg.Entries <= 0 {
		cfg.Entries = DefaultEntries
	}
	if cfg.Budget == nil {
		cfg.Budget = NewBudget(DefaultBytes)
	}
	t := &Table[K, V]{cfg: cfg, m: make(map[K]*node[K, V])}
	cfg.Budget.tables = append(cfg.Budget.tables, t)
	return t
}

// Len returns the number of entries.
func (t *Table[K, V]) Len() int { return len(t.m) }

// Bytes returns the bytes the entries hold, as Config.Size counts them.
func (t *Table[K, V]) Bytes() int64 { return t.bytes }

// Get returns the value under k.
func (t *Table[K, V]) Get(k K) (V, bool) {
	n, ok := t.m[k]
	if !ok {
		var zero V
		return zero, false
	}
	return n.val, true
}

// Put stores v under k as the newest entry, then drops the oldest entries
// while a cap is exceeded (v itself last: an entry larger than the whole
// budget is not kept). It reports whether v is still held.
func (t *Table[K, V]) Put(k K, v V) bool {
	if n, ok := t.m[k]; ok {
		t.unlink(n)
		t.bytes -= n.size
		t.cfg.Budget.used -= n.size
		delete(t.m, k)
	}
	n := &node[K, V]{key: k, val: v, size: t.size(k, v), seq: t.cfg.Budget.next()}
	t.m[k] = n
	t.pushBack(n)
	t.bytes += n.size
	t.cfg.Budget.used += n.size
	for len(t.m) > t.cfg.Entries {
		t.evictOldest("entries")
	}
	t.cfg.Budget.enforce()
	_, kept := t.m[k]
	return kept
}

// Resize recounts the bytes of k's entry after its value changed in place
// (a pointer value), dropping the oldest entries if the budget is now
// exceeded. It reports whether the entry is still held.
func (t *Table[K, V]) Resize(k K) bool {
	n, ok := t.m[k]
	if !ok {
		return false
	}
	size := t.size(k, n.val)
	t.bytes += size - n.size
	t.cfg.Budget.used += size - n.size
	n.size = size
	t.cfg.Budget.enforce()
	_, kept := t.m[k]
	return kept
}

// Delete removes k's entry.
func (t *Table[K, V]) Delete(k K) {
	if n, ok := t.m[k]; ok {
		t.remove(n)
	}
}

// DeleteFunc removes every entry for which fn returns true and returns
// how many it removed.
func (t *Table[K, V]) DeleteFunc(fn func(K, V) bool) int {
	removed := 0
	for n := t.head; n != nil; {
		next := n.next
		if fn(n.key, n.val) {
			t.remove(n)
			removed++
		}
		n = next
	}
	return removed
}

// DropSession removes the entries of session sid (rule P6: state goes
// with its session) and returns how many it removed.
func (t *Table[K, V]) DropSession(sid string) int {
	if t.cfg.Session == nil {
		return 0
	}
	return t.DeleteFunc(func(k K, v V) bool { return t.cfg.Session(k, v) == sid })
}

// Each calls fn for every entry, oldest first, until fn returns false.
func (t *Table[K, V]) Each(fn func(K, V) bool) {
	for n := t.head; n != nil; n = n.next {
		if !fn(n.key, n.val) {
			return
		}
	}
}

func (t *Table[K, V]) size(k K, v V) int64 {
	if t.cfg.Size == nil {
		return 0
	}
	return t.cfg.Size(k, v)
}

// oldestSeq returns the put order of the oldest entry.
func (t *Table[K, V]) oldestSeq() (uint64, bool) {
	if t.head == nil {
		return 0, false
	}
	return t.head.seq, true
}

// evictOldest drops the oldest entry because cap was exceeded.
func (t *Table[K, V]) evictOldest(cap string) {
	n := t.head
	t.remove(n)
	if lg := t.cfg.Logger; lg != nil && lg.Enabled(context.Background(), slog.LevelDebug) {
		attrs := []any{"rule", "P6", "table", t.cfg.Name, "cap", cap, "bytes", n.size}
		if t.cfg.Describe != nil {
			attrs = append(attrs, t.cfg.Describe(n.key, n.val)...)
		} else {
			attrs = append(attrs, "key", n.key)
		}
		lg.Debug("state cap reached; oldest entry dropped", attrs...)
	}
}

func (t *Table[K, V]) remove(n *node[K, V]) {
	t.unlink(n)
	delete(t.m, n.key)
	t.bytes -= n.size
	t.cfg.Budget.used -= n.size
}

func (t *Table[K, V]) unlink(n *node[K, V]) {
	if n.prev != nil {
		n.prev.next = n.next
	} else {
		t.head = n.next
	}
	if n.next != nil {
		n.next.prev = n.prev
	} else {
		t.tail = n.prev
	}
	n.prev, n.next = nil, nil
}

func (t *Table[K, V]) pushBack(n *node[K, V]) {
	n.prev = t.tail
	if t.tail != nil {
		t.tail.next = n
	} else {
		t.head = n
	}
	t.tail = n
}

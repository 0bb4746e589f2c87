package cursor

// bounded is an insertion-ordered map with a capacity (rule P6): putting a
// new key into a full map evicts the oldest entry first, and the evicted
// key and value are returned so the caller can log it. Re-putting an
// existing key moves it to the back (it becomes the newest).
type bounded[K comparable, V any] struct {
	cap   int
	m     map[K]*node[K, V]
	head  *node[K, V] // oldest
	tail  *node[K, V] // newest
	count int
}

type node[K comparable, V any] struct {
	key        K
	val        V
	prev, next *node[K, V]
}

func newBounded[K comparable, V any](capacity int) *bounded[K, V] {
	if capacity < 1 {
		capacity = 1
	}
	return &bounded[K, V]{cap: capacity, m: make(map[K]*node[K, V])}
}

func (b *bounded[K, V]) len() int { return b.count }

func (b *bounded[K, V]) get(k K) (V, bool) {
	n, ok := b.m[k]
	if !ok {
		var zero V
		return zero, false
	}
	return n.val, true
}

// put stores v under k. When a new key does not fit, the oldest entry is
// removed and returned with evicted true.
func (b *bounded[K, V]) put(k K, v V) (oldK K, oldV V, evicted bool) {
	if n, ok := b.m[k]; ok {
		n.val = v
		b.unlink(n)
		b.pushBack(n)
		return oldK, oldV, false
	}
	if b.count >= b.cap && b.head != nil {
		o := b.head
		b.unlink(o)
		delete(b.m, o.key)
		b.count--
		oldK, oldV, evicted = o.key, o.val, true
	}
	n := &node[K, V]{key: k, val: v}
	b.m[k] = n
	b.pushBack(n)
	b.count++
	return oldK, oldV, evicted
}

func (b *bounded[K, V]) delete(k K) {
	n, ok := b.m[k]
	if !ok {
		return
	}
	b.unlink(n)
	delete(b.m, k)
	b.count--
}

// deleteFunc removes every entry for which fn returns true.
func (b *bounded[K, V]) deleteFunc(fn func(K, V) bool) {
	for n := b.head; n != nil; {
		next := n.next
		if fn(n.key, n.val) {
			b.delete(n.key)
		}
		n = next
	}
}

// each calls fn for every entry, oldest first, until fn returns false.
func (b *bounded[K, V]) each(fn func(K, V) bool) {
	for n := b.head; n != nil; n = n.next {
		if !fn(n.key, n.val) {
			return
		}
	}
}

func (b *bounded[K, V]) unlink(n *node[K, V]) {
	if n.prev != nil {
		n.prev.next = n.next
	} else {
		b.head = n.next
	}
	if n.next != nil {
		n.next.prev = n.prev
	} else {
		b.tail = n.prev
	}
	n.prev, n.next = nil, nil
}

func (b *bounded[K, V]) pushBack(n *node[K, V]) {
	n.prev = b.tail
	if b.tail != nil {
		b.tail.next = n
	} else {
		b.head = n
	}
	b.tail = n
}

package table

import (
	"reflect"
	"testing"
)

type entry struct {
	session string
	text    string
}

func newTable(b *Budget, entries int) *Table[string, entry] {
	return New(Config[string, entry]{
		Name: "test", Entries: entries, Budget: b,
		Size:    func(_ string, e entry) int64 { return int64(len(e.text)) },
		Session: func(_ string, e entry) string { return e.session },
	})
}

func keys[V any](t *Table[string, V]) []string {
	var out []string
	t.Each(func(k string, _ V) bool { out = append(out, k); return true })
	return out
}

func TestTable(t *testing.T) {
	tests := []struct {
		name     string
		entries  int
		bytes    int64
		puts     []string // key:session:size
		want     []string
		wantUsed int64
	}{
		{"entry cap drops the oldest", 2, 100, []string{"a", "b", "c"}, []string{"b", "c"}, 5},
		{"byte cap drops the oldest", 10, 5, []string{"a", "b", "c"}, []string{"b", "c"}, 5},
		{"re-put makes newest", 2, 100, []string{"a", "b", "a", "c"}, []string{"a", "c"}, 4},
		{"entry larger than the budget is not kept", 10, 5, []string{"a", "big"}, nil, 0},
	}
	sizes := map[string]string{"a": "x", "b": "yy", "c": "zzz", "big": "0123456789"}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := NewBudget(tt.bytes)
			tab := newTable(b, tt.entries)
			for _, k := range tt.puts {
				tab.Put(k, entry{text: sizes[k]})
			}
			if got := keys(tab); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("keys = %v, want %v", got, tt.want)
			}
			if b.Used() != tt.wantUsed || tab.Bytes() != tt.wantUsed {
				t.Fatalf("used = %d, table bytes %d; want %d", b.Used(), tab.Bytes(), tt.wantUsed)
			}
		})
	}
}

// TestBudgetShared pins that a budget drops the oldest entry of all its
// tables, whichever table is put into.
func TestBudgetShared(t *testing.T) {
	b := NewBudget(6)
	t1, t2 := newTable(b, 10), newTable(b, 10)
	t1.Put("old", entry{text: "xxx"})
	t2.Put("mid", entry{text: "yyy"})
	t2.Put("new", entry{text: "zz"})
	if _, ok := t1.Get("old"); ok {
		t.Fatal("the oldest entry (in the other table) was kept")
	}
	if got := keys(t2); !reflect.DeepEqual(got, []string{"mid", "new"}) {
		t.Fatalf("t2 = %v", got)
	}
	if b.Used() != 5 {
		t.Fatalf("used = %d", b.Used())
	}
}

func TestResizeAndSessions(t *testing.T) {
	b := NewBudget(10)
	tab := New(Config[string, *entry]{
		Budget:  b,
		Size:    func(_ string, e *entry) int64 { return int64(len(e.text)) },
		Session: func(_ string, e *entry) string { return e.session },
	})
	a, c := &entry{session: "s1", text: "aa"}, &entry{session: "s2", text: "cc"}
	tab.Put("a", a)
	tab.Put("c", c)
	a.text = "aaaaaaaaa"
	if tab.Resize("a") {
		t.Fatal("a grew past the budget with c newer, and was kept")
	}
	if b.Used() != 2 {
		t.Fatalf("used = %d", b.Used())
	}
	tab.Put("d", &entry{session: "s2", text: "d"})
	if n := tab.DropSession("s2"); n != 2 || tab.Len() != 0 || b.Used() != 0 {
		t.Fatalf("DropSession removed %d, len %d, used %d", n, tab.Len(), b.Used())
	}
}

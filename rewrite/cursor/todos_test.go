package cursor

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"
)

// mergeTodosByScan is the C8 merge as first written: for each changed item,
// a scan of the whole list for the last item with its id. It is the
// reference the indexed merge must agree with.
func mergeTodosByScan(list, changed [][]byte) [][]byte {
	out := append([][]byte(nil), list...)
	for _, it := range changed {
		id := todoID(it)
		idx := -1
		if id != "" {
			for i, old := range out {
				if todoID(old) == id {
					idx = i
				}
			}
		}
		if idx < 0 {
			out = append(out, it)
			continue
		}
		out[idx] = mergeTodo(out[idx], it)
	}
	return out
}

// TestMergeTodosDuplicateIDs: with the same id twice in the list (a vendor
// may send that), the last one is updated, as the scan did (C8).
func TestMergeTodosDuplicateIDs(t *testing.T) {
	tests := []struct {
		name          string
		list, changed []string
		want          string
	}{
		{"last of two equal ids updated", []string{`{"id":"a","n":1}`, `{"id":"a","n":2}`}, []string{`{"id":"a","n":3}`},
			`[{"id":"a","n":1},{"id":"a","n":3}]`},
		{"an appended id is found by a later item", nil, []string{`{"id":"a","n":1}`, `{"id":"a","n":2}`},
			`[{"id":"a","n":2}]`},
		{"items without id never merge", []string{`{"n":1}`}, []string{`{"n":2}`, `{"id":"","n":3}`},
			`[{"n":1},{"n":2},{"id":"","n":3}]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := string(rawArray(mergeTodos(raws(tt.list), raws(tt.changed))))
			if got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}

// TestMergeTodosAgreesWithScan: the indexed merge gives the same list as
// the scan for random lists with repeated, numeric, escaped and missing ids.
func TestMergeTodosAgreesWithScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	ids := []string{`"a"`, `"\u0061"`, `"b"`, `1`, `1.0`, `{"n": 1}`, `{"n":1}`, `null`, `""`}
	item := func(i int) []byte {
		if rng.IntN(6) == 0 {
			return fmt.Appendf(nil, `{"content":"c%d"}`, i)
		}
		return fmt.Appendf(nil, `{"id":%s,"content":"c%d","status":"pending"}`, ids[rng.IntN(len(ids))], i)
	}
	for round := range 300 {
		var list, changed [][]byte
		for i := range rng.IntN(8) {
			list = append(list, item(i))
		}
		for i := range rng.IntN(8) {
			changed = append(changed, item(100+i))
		}
		got := string(rawArray(mergeTodos(list, changed)))
		want := string(rawArray(mergeTodosByScan(list, changed)))
		if got != want {
			t.Fatalf("round %d: list %s changed %s:\n got %s\nwant %s", round, rawArray(list), rawArray(changed), got, want)
		}
	}
}

// BenchmarkMergeTodos merges n todo ids into a list of n (a
// quadratic scan took ~40 s for n=10000).
func BenchmarkMergeTodos(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			var list, changed [][]byte
			for i := range n {
				list = append(list, fmt.Appendf(nil, `{"id":"t%d","content":"c%d","status":"pending"}`, i, i))
				changed = append(changed, fmt.Appendf(nil, `{"id":"t%d","status":"completed"}`, n-1-i))
			}
			b.ResetTimer()
			for b.Loop() {
				mergeTodos(list, changed)
			}
		})
	}
}

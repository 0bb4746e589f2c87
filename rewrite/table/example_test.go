package table_test

import (
	"fmt"

	"github.com/acp-normalize/acp-normalize/rewrite/table"
)

// A module's state across frames, capped (rule P6): entries and bytes
// (a budget the connection's tables share) are capped, the oldest entry
// goes first, and a session's entries go with the session.
func ExampleTable() {
	type call struct{ session, prompt string }
	budget := table.NewBudget(16) // bytes, for all the connection's tables
	calls := table.New(table.Config[string, call]{
		Name:    "launch calls",
		Entries: 3,
		Budget:  budget,
		Size:    func(id string, c call) int64 { return int64(len(id) + len(c.prompt)) },
		Session: func(_ string, c call) string { return c.session },
	})
	calls.Put("t1", call{"s1", "read"}) // 6 bytes
	calls.Put("t2", call{"s2", "grep"}) // 12
	calls.Put("t3", call{"s1", "ls"})   // 16: the budget, full
	fmt.Println(calls.Len(), "calls,", budget.Used(), "bytes")

	// One more exceeds the budget: the oldest, t1, is dropped for it.
	calls.Put("t4", call{"s2", "cat"})
	_, ok := calls.Get("t1")
	fmt.Println("t1 kept:", ok, "|", calls.Len(), "calls,", budget.Used(), "bytes")

	// session/close of s2: its calls go.
	fmt.Println("dropped with s2:", calls.DropSession("s2"), "| left:", calls.Len())
	// Output:
	// 3 calls, 16 bytes
	// t1 kept: false | 3 calls, 15 bytes
	// dropped with s2: 2 | left: 1
}

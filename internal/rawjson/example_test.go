package rawjson_test

import (
	"fmt"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
)

// Pick reads several members of an object in one walk: a big member (a
// file read in a tool call's content) is skipped once, not once per
// member looked up. The values are the frame's own bytes; a missing
// member is nil.
func ExamplePick() {
	update := []byte(`{"sessionUpdate":"tool_call_update","toolCallId":"call_1","content":[{"type":"content","content":{"type":"text","text":"... 5 MB ..."}}],"status":"completed"}`)
	keys := []string{"toolCallId", "status", "rawOutput"}
	vals := make([][]byte, len(keys))
	if err := rawjson.Pick(update, keys, vals); err != nil {
		fmt.Println(err)
		return
	}
	for i, k := range keys {
		if vals[i] == nil {
			fmt.Println(k + ": none")
			continue
		}
		fmt.Printf("%s: %s\n", k, vals[i])
	}
	id, _ := rawjson.DecodeString(vals[0])
	fmt.Println("decoded:", id)
	// Output:
	// toolCallId: "call_1"
	// status: "completed"
	// rawOutput: none
	// decoded: call_1
}

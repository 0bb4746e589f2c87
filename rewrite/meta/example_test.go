package meta_test

import (
	"encoding/json"
	"fmt"

	"github.com/acp-normalize/acp-normalize/rewrite/meta"
)

// A module fills a Subagent from the vendor's own data only (rule M): a
// field the vendor did not say stays nil and is left out of the JSON,
// which keeps the contract's field order. SetSubagent puts it at
// _meta["acp-normalize"].subagent of the launch call's update, every other
// byte of the frame kept.
func ExampleSubagent() {
	background := false
	s := &meta.Subagent{
		Vendor:      "acme",
		ToolName:    "task",
		Description: meta.Text("count files"),
		Prompt:      meta.Text("Count the .go files under ./proxy"),
		Background:  &background,
		Status:      meta.FromToolCall("in_progress"),
		DurationMs:  json.RawMessage(`7627`),
		Model:       meta.Text(""), // not said: left out
	}
	fmt.Println(string(s.JSON()))

	frame := []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call_update","toolCallId":"call_1","_meta":{"acme":1}}}}`)
	out, err := meta.SetSubagent(frame, s, "params", "update")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(out))
	// Output:
	// {"vendor":"acme","toolName":"task","description":"count files","prompt":"Count the .go files under ./proxy","background":false,"status":"running","durationMs":7627}
	// {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call_update","toolCallId":"call_1","_meta":{"acme":1,"acp-normalize":{"subagent":{"vendor":"acme","toolName":"task","description":"count files","prompt":"Count the .go files under ./proxy","background":false,"status":"running","durationMs":7627}}}}}}
}

// A snapshot's status only moves forward: a late frame that reports an
// earlier state leaves it as it was.
func ExampleStatus_Advance() {
	s := meta.Subagent{Status: meta.StatusCompleted}
	moved := s.Status.Advance(meta.FromToolCall("in_progress"))
	fmt.Println(s.Status, moved)
	// Output: completed false
}

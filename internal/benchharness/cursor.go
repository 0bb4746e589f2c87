package benchharness

import "fmt"

// The vendor frames of the mixed workload are Cursor's (docs/cursor.md):
// they exercise the module that answers agent requests itself.

// subagent writes a Cursor subagent triple: the task tool call, its
// completion, then the cursor/task request the proxy answers (C3).
func (g *generator) subagent() {
	g.tools++
	g.ids++
	id := fmt.Sprintf("tool_%08d", g.tools)
	g.update(`{"sessionUpdate":"tool_call","toolCallId":"` + id + `","title":"Task","kind":"other","status":"pending","rawInput":{"_toolName":"task","description":"count files","prompt":"Count the .go files under ./proxy.","subagentType":{"unspecified":{}}}}`)
	g.update(`{"sessionUpdate":"tool_call_update","toolCallId":"` + id + `","status":"completed","rawOutput":{"durationMs":7627,"isBackground":false}}`)
	g.line(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"cursor/task","params":{"toolCallId":"%s","description":"count files","prompt":"Count the .go files under ./proxy.","subagentType":{"custom":{"unspecified":{}}},"model":"gpt-5.4-mini-medium","agentId":"5b886cff-2c1a-4f0e-b7d3-8a9e6f1c2d40","durationMs":7627}}`, g.ids, id))
}

// todos writes a cursor/update_todos request (C8), merging after the
// first.
func (g *generator) todos() {
	g.ids++
	g.line(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"cursor/update_todos","params":{"toolCallId":"todo_%d","todos":[{"id":"t1","content":"Move proxy request tracking","status":"completed"},{"id":"t2","content":"Add tests","status":"in_progress"}],"merge":%t}}`, g.ids, g.ids, g.ids > 1))
}

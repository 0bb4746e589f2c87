package codex_test

import (
	"testing"

	"github.com/acp-normalize/acp-normalize/rewrite/codex"
	"github.com/acp-normalize/acp-normalize/route/routetest"
)

// TestTriggers: the frames the module needs reach it; a chunk that only
// mentions them does not (P1 hot path: it is never decoded).
func TestTriggers(t *testing.T) {
	routetest.CheckTriggers(t, codex.Module(), []routetest.TriggerCase{
		{Name: "initialize result", Frame: `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentInfo":{"name":"@agentclientprotocol/codex-acp"}}}`, Want: true},
		{Name: "launch call", Frame: `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"S","update":{"sessionUpdate":"tool_call","toolCallId":"c","title":"spawnAgent","rawInput":{"senderThreadId":"S"}}}}`, Want: true},
		{Name: "wait call", Frame: `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"S","update":{"sessionUpdate":"tool_call_update","toolCallId":"w","rawInput":{"agentsStates":{}}}}}`, Want: true},
		{Name: "session close", Frame: `{"jsonrpc":"2.0","id":4,"method":"session/close","params":{"sessionId":"S"}}`, Want: true},
		{Name: "another tool call", Frame: `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"S","update":{"sessionUpdate":"tool_call","toolCallId":"c2","title":"cat notes.txt"}}}`, Want: false},
		{Name: "chunk mentioning them", Frame: `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"S","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"\"spawnAgent\" \"agentsStates\" \"agentInfo\" \"session/close\""}}}}`, Want: false},
	})
}

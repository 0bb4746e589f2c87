package gemini_test

import (
	"testing"

	"github.com/acp-normalize/acp-normalize/rewrite/gemini"
	"github.com/acp-normalize/acp-normalize/route/routetest"
)

// TestTriggers: the frames the module needs reach it; a chunk that only
// mentions them does not (P1 hot path: it is never decoded).
func TestTriggers(t *testing.T) {
	routetest.CheckTriggers(t, gemini.Module(), []routetest.TriggerCase{
		{Name: "initialize result", Frame: `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentInfo":{"name":"gemini-cli"}}}`, Want: true},
		{Name: "launch call", Frame: `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"S","update":{"sessionUpdate":"tool_call","toolCallId":"invoke_agent__invoke_agent_1_0","title":"Delegating to agent 'cli_help'"}}}`, Want: true},
		// The same JSON in other spellings reaches it too.
		{Name: "V2 launch call with spaces", Frame: `{"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "S", "update": {"sessionUpdate": "tool_call", "toolCallId": "invoke_agent__invoke_agent_1_0"}}}`, Want: true},
		{Name: "V2 launch call with an escape", Frame: `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"S","update":{"sessionUpdate":"tool_call","toolCallId":"invoke\u005fagent__invoke_agent_1_0"}}}`, Want: true},
		{Name: "V2 launch call with an escaped key", Frame: `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"S","update":{"sessionUpdate":"tool_call","\u0074oolCallId":"invoke_agent__invoke_agent_1_0"}}}`, Want: true},
		{Name: "V1 initialize result with spaces", Frame: `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentInfo" : {"name":"gemini-cli"}}}`, Want: true},
		{Name: "session close", Frame: `{"jsonrpc":"2.0","id":4,"method":"session/close","params":{"sessionId":"S"}}`, Want: true},
		{Name: "another tool call", Frame: `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"S","update":{"sessionUpdate":"tool_call","toolCallId":"read_file__read_file_1_0"}}}`, Want: false},
		{Name: "chunk mentioning them", Frame: `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"S","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"\"toolCallId\":\"invoke_agent__x\" \"agentInfo\": \"session/close\""}}}}`, Want: false},
	})
}

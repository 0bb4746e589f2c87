package sessions_test

import (
	"testing"

	"github.com/acp-normalize/acp-normalize/rewrite/sessions"
	"github.com/acp-normalize/acp-normalize/route/routetest"
)

// TestTriggers: the frames the module works on reach it; the agent's
// text, whatever it mentions, and ordinary frames do not (P1: a chunk
// storm is never decoded for the module).
func TestTriggers(t *testing.T) {
	routetest.CheckTriggers(t, sessions.Module(nil), []routetest.TriggerCase{
		{Name: "client initialize", Frame: `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"clientCapabilities":{"subagents":{}}}}`, Want: true},
		{Name: "a launch call a vendor module annotated", Frame: `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"t","_meta":{"acp-normalize":{"subagent":{"vendor":"qwen"}}}}}}`, Want: true},
		{Name: "a linked child frame", Frame: `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","_meta":{"acp-normalize":{"parentToolCallId":"t"}}}}}`, Want: true},
		{Name: "a client frame naming a synthesized child", Frame: `{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"acp-normalize-subagent-e7c8d5f8a597e5b722604bae"}}`, Want: true},
		{Name: "draft spawn", Frame: `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"subagent_spawned","subagentSessionId":"c"}}}`, Want: true},
		{Name: "draft state", Frame: `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"c","update":{"sessionUpdate":"subagent_state_update","state":"completed"}}}`, Want: true},
		{Name: "native announcement", Frame: `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"subagent_update","sessionId":"c"}}}`, Want: true},
		{Name: "a plain permission request (a hidden child's is watched by its id)", Frame: `{"jsonrpc":"2.0","id":1,"method":"session/request_permission","params":{"sessionId":"s"}}`, Want: false},
		{Name: "a plain fs request", Frame: `{"jsonrpc":"2.0","id":1,"method":"fs/read_text_file","params":{"sessionId":"s"}}`, Want: false},
		{Name: "close", Frame: `{"jsonrpc":"2.0","id":1,"method":"session/close","params":{"sessionId":"s"}}`, Want: true},
		{Name: "a chunk", Frame: `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}}`, Want: false},
		// The triggers that end in a quote never match inside a string,
		// where every quote is escaped. The one that opens with one only
		// ("acp-normalize-subagent-) can: such a mention costs one
		// decode and changes nothing.
		{Name: "a chunk that mentions the triggers", Frame: `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"\"initialize\" \"acp-normalize\" \"subagent_update\" \"session\" \"session_message\" \"session/close\" \"elicitation/create\""}}}}`, Want: false},
		{Name: "a tool call linking a session (taken out for a client that did not opt in, and for AIR)", Frame: `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"t","content":[{"type": "session","sessionId":"c"}]}}}`, Want: true},
		{Name: "a plain tool call", Frame: `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"t","title":"Read"}}}`, Want: false},
		// The client's prompt names a session of its own (S7); its
		// answer ends the turn (S4). Both are one frame per turn.
		{Name: "a prompt", Frame: `{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s","prompt":[]}}`, Want: true},
		{Name: "a prompt's answer", Frame: `{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}`, Want: true},
		{Name: "an error answer", Frame: `{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"x"}}`, Want: true},
		{Name: "a session/new answer, not watched", Frame: `{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s"}}`, Want: false},
	})
}

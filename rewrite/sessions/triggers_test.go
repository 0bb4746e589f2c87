package sessions_test

import (
	"testing"

	"github.com/acp-normalize/acp-normalize/proxy/proxytest"
	"github.com/acp-normalize/acp-normalize/rewrite/sessions"
)

// TestTriggers: the frames the module works on reach it; the agent's
// text, whatever it mentions, and ordinary frames do not (P1: a chunk
// storm is never decoded for the module).
func TestTriggers(t *testing.T) {
	proxytest.CheckTriggers(t, sessions.Module(nil), []proxytest.TriggerCase{
		{"client initialize", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"clientCapabilities":{"subagents":{}}}}`, true},
		{"a launch call a vendor module annotated", `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"t","_meta":{"acp-normalize":{"subagent":{"vendor":"qwen"}}}}}}`, true},
		{"a linked child frame", `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","_meta":{"acp-normalize":{"parentToolCallId":"t"}}}}}`, true},
		{"a client frame naming a synthesized child", `{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"acp-normalize-subagent-e7c8d5f8a597e5b722604bae"}}`, true},
		{"draft spawn", `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"subagent_spawned","subagentSessionId":"c"}}}`, true},
		{"draft state", `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"c","update":{"sessionUpdate":"subagent_state_update","state":"completed"}}}`, true},
		{"native announcement", `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"subagent_update","sessionId":"c"}}}`, true},
		{"a session link block", `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call","content":[{"type":"session","sessionId":"c"}]}}}`, true},
		{"permission request", `{"jsonrpc":"2.0","id":1,"method":"session/request_permission","params":{"sessionId":"s"}}`, true},
		{"fs request", `{"jsonrpc":"2.0","id":1,"method":"fs/read_text_file","params":{"sessionId":"s"}}`, true},
		{"close", `{"jsonrpc":"2.0","id":1,"method":"session/close","params":{"sessionId":"s"}}`, true},
		{"a chunk", `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}}`, false},
		// The triggers that end in a quote never match inside a string,
		// where every quote is escaped. The three that open with one only
		// ("fs/, "terminal/, "acp-normalize-subagent-) can: such a
		// mention costs one decode and changes nothing.
		{"a chunk that mentions the triggers", `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"\"initialize\" \"acp-normalize\" \"subagent_update\" \"session\" \"session_message\" \"session/close\" \"elicitation/create\""}}}}`, false},
		{"a plain tool call", `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"t","title":"Read"}}}`, false},
		{"a prompt", `{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s","prompt":[]}}`, false},
	})
}

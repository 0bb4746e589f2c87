package codex_test

import (
	"testing"

	"github.com/acp-normalize/acp-normalize/rewrite/codex"
	"github.com/acp-normalize/acp-normalize/rewrite/rewritetest"
)

// TestTriggers: the frames the module needs reach it; a chunk that only
// mentions them does not (P1 hot path: it is never decoded).
func TestTriggers(t *testing.T) {
	tests := []struct {
		name  string
		frame string
		want  bool
	}{
		{"initialize result", `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentInfo":{"name":"@agentclientprotocol/codex-acp"}}}`, true},
		{"launch call", `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"S","update":{"sessionUpdate":"tool_call","toolCallId":"c","title":"spawnAgent","rawInput":{"senderThreadId":"S"}}}}`, true},
		{"wait call", `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"S","update":{"sessionUpdate":"tool_call_update","toolCallId":"w","rawInput":{"agentsStates":{}}}}}`, true},
		{"session close", `{"jsonrpc":"2.0","id":4,"method":"session/close","params":{"sessionId":"S"}}`, true},
		{"another tool call", `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"S","update":{"sessionUpdate":"tool_call","toolCallId":"c2","title":"cat notes.txt"}}}`, false},
		{"chunk mentioning them", `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"S","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"\"spawnAgent\" \"agentsStates\" \"agentInfo\" \"session/close\""}}}}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := rewritetest.Triggered(codex.Module(), []byte(tt.frame)); got != tt.want {
				t.Errorf("triggered %v, want %v", got, tt.want)
			}
		})
	}
}

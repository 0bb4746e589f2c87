package gemini_test

import (
	"testing"

	"github.com/acp-normalize/acp-normalize/rewrite/gemini"
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
		{"initialize result", `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentInfo":{"name":"gemini-cli"}}}`, true},
		{"launch call", `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"S","update":{"sessionUpdate":"tool_call","toolCallId":"invoke_agent__invoke_agent_1_0","title":"Delegating to agent 'cli_help'"}}}`, true},
		{"session close", `{"jsonrpc":"2.0","id":4,"method":"session/close","params":{"sessionId":"S"}}`, true},
		{"another tool call", `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"S","update":{"sessionUpdate":"tool_call","toolCallId":"read_file__read_file_1_0"}}}`, false},
		{"chunk mentioning them", `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"S","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"\"toolCallId\":\"invoke_agent__x\" \"agentInfo\": \"session/close\""}}}}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := rewritetest.Triggered(gemini.Module(), []byte(tt.frame)); got != tt.want {
				t.Errorf("triggered %v, want %v", got, tt.want)
			}
		})
	}
}

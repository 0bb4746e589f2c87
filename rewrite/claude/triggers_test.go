package claude_test

import (
	"testing"

	"github.com/acp-normalize/acp-normalize/route/routetest"
)

// TestTriggers: the frames L6 and L7 need reach the module (a child frame
// carries claudeCode, the hand-back usage_update its "handback" member),
// while message chunks and other usage_updates, even ones that mention the
// word, do not.
func TestTriggers(t *testing.T) {
	m := claudeModule()
	tests := []struct {
		name, frame string
		want        bool
	}{
		{"child tool call (L6)", `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"_meta":{"claudeCode":{"toolName":"Read","parentToolUseId":"toolu_A"}},"toolCallId":"t1","sessionUpdate":"tool_call"}}}`, true},
		{"hand-back usage_update (L7)", `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"usage_update","used":1,"size":2,"_meta":{"_claude/origin":{"kind":"peer","from":"a1","handback":true,"handbackReportText":"r"}}}}}`, true},
		{"other usage_update", `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"usage_update","used":1,"size":2,"_meta":{"_claude/origin":{"kind":"human"}}}}}`, false},
		{"chunk quoting the member", `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"set \"handback\": true to hand back"}}}}`, false},
		{"chunk", `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"the subagent's handback"}}}}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := routetest.Triggered(m, []byte(tt.frame)); got != tt.want {
				t.Fatalf("triggers the module: %v, want %v", got, tt.want)
			}
		})
	}
}

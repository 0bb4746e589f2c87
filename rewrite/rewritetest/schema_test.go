package rewritetest

import "testing"

// TestSchema pins what the P3 check accepts and rejects.
func TestSchema(t *testing.T) {
	s := LoadSchema(t)
	tests := []struct {
		name, frame string
		ok          bool
	}{
		{"tool call update with our _meta", `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"S","update":{"sessionUpdate":"tool_call_update","toolCallId":"T","_meta":{"acp-normalize":{"subagent":{"vendor":"x"}}}}}}`, true},
		{"S1 session link is the known exception", `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"S","update":{"sessionUpdate":"tool_call_update","toolCallId":"T","content":[{"type":"session","sessionId":"C"}]}}}`, true},
		{"unknown sessionUpdate", `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"S","update":{"sessionUpdate":"subagent_task","toolCallId":"T"}}}`, false},
		{"plan entry status outside the vocabulary", `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"S","update":{"sessionUpdate":"plan","entries":[{"content":"a","priority":"high","status":"done"}]}}}`, false},
		{"vendor method", `{"jsonrpc":"2.0","id":1,"method":"cursor/task","params":{}}`, false},
		{"permission request", `{"jsonrpc":"2.0","id":"acp-normalize:1","method":"session/request_permission","params":{"sessionId":"S","toolCall":{"toolCallId":"T"},"options":[{"optionId":"a","name":"A","kind":"allow_once"}]}}`, true},
		{"error response", `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"agent exited"}}`, true},
		{"no jsonrpc", `{"method":"session/update","params":{}}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := s.Validate([]byte(tt.frame))
			if (err == nil) != tt.ok {
				t.Fatalf("Validate = %v, want ok %v", err, tt.ok)
			}
		})
	}
}

package rewrite

import (
	"testing"

	"github.com/acp-normalize/acp-normalize/pipe"
)

// TestIdentity pins rule V1: exact agentInfo.name, or --vendor alone.
func TestIdentity(t *testing.T) {
	tests := []struct {
		name     string
		settings Settings
		frames   []string
		want     bool
	}{
		{"off before initialize", nil, nil, false},
		{"exact name", nil, []string{`{"jsonrpc":"2.0","id":0,"result":{"agentInfo":{"name":"qwen-code"}}}`}, true},
		{"other agent", nil, []string{`{"jsonrpc":"2.0","id":0,"result":{"agentInfo":{"name":"OpenCode"}}}`}, false},
		{"case matters", nil, []string{`{"jsonrpc":"2.0","id":0,"result":{"agentInfo":{"name":"Qwen-Code"}}}`}, false},
		{"no agentInfo", nil, []string{`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}`}, false},
		{"--vendor names it", Settings{VendorOption: "qwen"}, nil, true},
		{"--vendor wins over agentInfo", Settings{VendorOption: "qwen"}, []string{`{"jsonrpc":"2.0","id":0,"result":{"agentInfo":{"name":"OpenCode"}}}`}, true},
		{"--vendor names another", Settings{VendorOption: "opencode"}, []string{`{"jsonrpc":"2.0","id":0,"result":{"agentInfo":{"name":"qwen-code"}}}`}, false},
		{"a client frame is no result", nil, []string{`{"jsonrpc":"2.0","id":0,"result":{"agentInfo":{"name":"qwen-code"}}}#client`}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := NewIdentity(tt.settings, "qwen", "qwen-code")
			for _, fr := range tt.frames {
				from := pipe.Agent
				if n := len(fr) - len("#client"); n > 0 && fr[n:] == "#client" {
					fr, from = fr[:n], pipe.Client
				}
				id.Observe(NewFrame(from, []byte(fr), 1))
			}
			if got := id.Active(); got != tt.want {
				t.Fatalf("Active = %v, want %v", got, tt.want)
			}
		})
	}
}

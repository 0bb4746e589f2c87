package cursor_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/proxy"
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/rewrite/cursor"
	"github.com/acp-normalize/acp-normalize/rewrite/rewritetest"
)

// TestLargeLaunchCallMemory pins issue 8 item 8: rewriting one subagent
// tool call costs a small constant times its size. The enriched frame
// itself holds the prompt three times (rawInput, the C4 content and the M
// snapshot); the whole rewrite may allocate at most 6.5 times the frame:
// that output, the decoded prompt, its content array and the snapshot
// (32.6× before the kit: every Set copied the frame once per path level,
// and encoders grew their buffers by doubling).
func TestLargeLaunchCallMemory(t *testing.T) {
	prompt := rewritetest.JSONText(rewritetest.LaunchPrompt(rewritetest.LargePromptSize()))
	frame := append(append([]byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"t1","title":"Task","kind":"other","status":"pending","rawInput":{"_toolName":"task","description":"count","prompt":`),
		prompt...), `}}}}`...)
	rewritetest.CheckRewriteCost(t, cursor.Module(cursor.Options{}), frame, 6.5)
}

// TestHeldBytesCapped pins P6 in bytes (issue 8 item 8): held cursor/task
// requests count their prompts, and the oldest is dropped once the
// connection's budget is exceeded, however few entries there are.
func TestHeldBytesCapped(t *testing.T) {
	size := 1 << 20
	if rewritetest.Race {
		size = 64 << 10
	}
	prompt := string(rewritetest.JSONText(rewritetest.LaunchPrompt(size)))
	budget := int64(3*size + 32<<10) // three prompts and change
	r, err := proxy.NewRouter(proxy.RouterConfig{Modules: []rewrite.Module{cursor.Module(cursor.Options{MaxBytes: budget})}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		task := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"cursor/task","params":{"toolCallId":"t%d","description":"d%d","prompt":%s}}`, i, i, i, prompt)
		r.Handle(pipe.Agent, []byte(task), nil)
	}
	tests := []struct {
		name string
		id   string
		held bool
	}{
		{"oldest dropped", "t0", false},
		{"newer kept", "t1", true},
		{"newest kept", "t3", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			call := fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":%q,"title":"Task","rawInput":{"_toolName":"task"}}}}`, tt.id)
			outs := r.Handle(pipe.Agent, []byte(call), nil)
			if len(outs) != 1 {
				t.Fatalf("%d outputs", len(outs))
			}
			held := bytes.Contains(outs[0].Frame, []byte(`"description":"d`))
			if held != tt.held {
				t.Fatalf("cursor/task of %s held: %v, want %v", tt.id, held, tt.held)
			}
		})
	}
}

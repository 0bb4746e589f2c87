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
// snapshot); the whole rewrite may allocate at most maxFactor times the
// frame: that output, the decoded prompt, its content array and the
// snapshot (31.7× before the kit: every Set copied the frame once per
// path level, and encoders grew their buffers by doubling).
func TestLargeLaunchCallMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates a few hundred MiB")
	}
	size := 16 << 20
	if rewritetest.Race {
		size = 2 << 20 // the race detector makes large frames slow
	}
	const maxFactor = 6.5
	frame := append(append([]byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"t1","title":"Task","kind":"other","status":"pending","rawInput":{"_toolName":"task","description":"count","prompt":`),
		rewritetest.JSONText(rewritetest.LaunchPrompt(size))...), `}}}}`...)
	r, err := proxy.NewRouter(proxy.RouterConfig{Modules: []rewrite.Module{cursor.Module(cursor.Options{})}})
	if err != nil {
		t.Fatal(err)
	}
	var outs []proxy.Out
	alloc := rewritetest.AllocatedBy(func() { outs = r.Handle(pipe.Agent, frame, nil) })
	if len(outs) != 1 || outs[0].Op != "replace" {
		t.Fatalf("outputs: %d", len(outs))
	}
	factor := float64(alloc) / float64(len(frame))
	t.Logf("frame %d MiB, output %d MiB, allocated %d MiB (%.1f× the frame)", len(frame)>>20, len(outs[0].Frame)>>20, alloc>>20, factor)
	if factor > maxFactor {
		t.Errorf("rewriting a %d MiB launch call allocated %.1f× its size, want at most %.1f×", len(frame)>>20, factor, maxFactor)
	}
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

package codex_test

import (
	"testing"

	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/rewrite/codex"
	"github.com/acp-normalize/acp-normalize/rewrite/rewritetest"
)

// TestLargeLaunchCallMemory: a spawnAgent frame with a 16 MiB prompt costs
// a small constant times its size (the prompt is copied into the snapshot
// and the frame is spliced, never decoded into maps).
func TestLargeLaunchCallMemory(t *testing.T) {
	frame := []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"S","update":{"sessionUpdate":"tool_call","toolCallId":"c1","kind":"other","title":"spawnAgent","status":"in_progress","rawInput":{"prompt":` +
		rewritetest.LargeText(t) + `,"senderThreadId":"S","receiverThreadIds":[],"agentsStates":{},"model":"","reasoningEffort":"medium"}}}}`)
	rewritetest.CheckRewriteCost(t, codex.Module(), rewrite.Settings{rewrite.VendorOption: codex.Name}, frame, 4.5)
}

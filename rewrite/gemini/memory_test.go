package gemini_test

import (
	"testing"

	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/rewrite/gemini"
	"github.com/acp-normalize/acp-normalize/rewrite/rewritetest"
)

// TestLargeLaunchCallMemory: a launch-call completion carrying a 16 MiB
// text costs a small constant times its size (the text is copied into the
// snapshot as resultText and the frame is spliced, never decoded into
// maps).
func TestLargeLaunchCallMemory(t *testing.T) {
	frame := []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"S","update":{"sessionUpdate":"tool_call_update","toolCallId":"invoke_agent__invoke_agent_1_0","status":"completed","title":"Delegating to agent 'generalist'","content":[{"type":"content","content":{"type":"text","text":` +
		rewritetest.LargeText(t) + `}}],"kind":"think"}}}`)
	rewritetest.CheckRewriteCost(t, gemini.Module(), rewrite.Settings{rewrite.VendorOption: gemini.Name}, frame, 4.5)
}

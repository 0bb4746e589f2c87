package claude_test

import (
	"testing"

	"github.com/acp-normalize/acp-normalize/rewrite/rewritetest"
)

// TestLargeLaunchCallMemory pins issue 8 item 8 for Claude: the enriched
// frame holds the prompt twice (rawInput and the M snapshot); the rewrite
// may allocate at most 4.5 times the frame: that output, the decoded
// prompt and the snapshot (18.6× before the kit: rawInput decoded into a
// map, one frame copy per path level of each splice).
func TestLargeLaunchCallMemory(t *testing.T) {
	prompt := rewritetest.JSONText(rewritetest.LaunchPrompt(rewritetest.LargePromptSize()))
	frame := launchFrame("s", "t1", "tool_call", `{"description":"count","subagent_type":"general","prompt":`+string(prompt)+`}`)
	rewritetest.CheckRewriteCost(t, claudeModule(), frame, 4.5)
}

package opencode_test

import (
	"testing"

	"github.com/acp-normalize/acp-normalize/rewrite/opencode"
	"github.com/acp-normalize/acp-normalize/rewrite/rewritetest"
	"github.com/acp-normalize/acp-normalize/route/routetest"
)

// TestLargeLaunchCallMemory: a launch call of N MiB costs a small
// constant times N (P6, F3): its prompt is decoded once into the
// snapshot and the snapshot spliced once into the frame.
func TestLargeLaunchCallMemory(t *testing.T) {
	frame := []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"in_progress","title":"count","rawInput":{"description":"count","subagent_type":"general","prompt":` + rewritetest.LargeText(t) + `}}}}`)
	routetest.CheckRouteCost(t, opencode.Module(), [][]byte{
		[]byte(`{"jsonrpc":"2.0","id":0,"result":{"agentInfo":{"name":"OpenCode"}}}`),
		[]byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"t1","title":"task","rawInput":{}}}}`),
	}, frame, 4.5)
}

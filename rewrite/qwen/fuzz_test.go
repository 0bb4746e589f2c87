package qwen_test

import (
	"testing"

	"github.com/acp-normalize/acp-normalize/rewrite/qwen"
	"github.com/acp-normalize/acp-normalize/route/routetest"
)

// FuzzQwen feeds arbitrary agent frames to the qwen module after a
// qwen-code initialize result and a launch call: the module must never
// panic (P5: a rule that fails forwards the frame unchanged), never drop
// an object frame, forward a frame it leaves alone byte for byte (P1),
// and write only valid JSON for a valid JSON frame.
func FuzzQwen(f *testing.F) {
	seeds := []string{
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call_update","toolCallId":"call_1","status":"completed","title":"Agent","rawInput":{"description":"d","run_in_background":true},"rawOutput":{"type":"task_execution","status":"background","executionSummary":{"totalDurationMs":5}},"_meta":{"toolName":"agent"}}}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","_meta":{"parentToolCallId":"call_1","backgroundTask":{"taskId":"t","status":"completed","toolUseId":"call_1"}}}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"session/request_permission","params":{"sessionId":"s1","toolCall":{"toolCallId":"call_2","_meta":{"parentToolCallId":7}}}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call","toolCallId":"call_1","_meta":{"toolName":"task"},"title":"Task"}}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call","toolCallId":"call_1","_meta":"x","rawInput":[1]}}}`,
	}
	result := []byte(`{"jsonrpc":"2.0","id":0,"result":{"agentInfo":{"name":"qwen-code"}}}`)
	launch := []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call","toolCallId":"call_1","title":"Agent","rawInput":{},"_meta":{"toolName":"agent"}}}}`)
	routetest.FuzzAgentFrames(f, qwen.Module(), result, seeds, func(frame []byte) [][]byte {
		return [][]byte{launch, frame}
	})
}

// FuzzQwenDifferential: a session, the same session with every
// frame spelled otherwise (blanks, escaped key and value characters,
// reordered members) and the same session with decoy members before some
// members under the same key (a parser reads the last one) get the same
// verdicts and snapshots, frame for frame. Seeds: the golden cases and the
// small recordings.
func FuzzQwenDifferential(f *testing.F) {
	routetest.FuzzDifferential(f, capturesDir, qwen.Module())
}

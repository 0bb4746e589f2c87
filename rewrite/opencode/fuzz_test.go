package opencode_test

import (
	"testing"

	"github.com/acp-normalize/acp-normalize/rewrite/opencode"
	"github.com/acp-normalize/acp-normalize/route/routetest"
)

// FuzzOpenCode feeds arbitrary agent frames to the opencode module after
// an OpenCode initialize result and a task call: the module must never
// panic (P5 turns errors into forwarding), never drop an object frame,
// forward a frame it leaves alone byte for byte (P1), and write only
// valid JSON for a valid JSON frame.
func FuzzOpenCode(f *testing.F) {
	seeds := []string{
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call_update","toolCallId":"call_1","status":"completed","title":"task","rawInput":{"description":"d","background":true},"rawOutput":{"output":"<task_result>x</task_result>","metadata":{"sessionId":"c","jobId":"j","model":{"modelID":"m","providerID":"p"}}}}}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call_update","toolCallId":"call_1","content":[{"content":{"text":"<task_result>"}}],"rawOutput":{"metadata":7}}}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call","toolCallId":"call_1","title":"task"}}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call_update","toolCallId":"call_1","title":7,"rawInput":[1]}}}`,
	}
	result := []byte(`{"jsonrpc":"2.0","id":0,"result":{"agentInfo":{"name":"OpenCode"}}}`)
	launch := []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call","toolCallId":"call_1","title":"task","rawInput":{}}}}`)
	routetest.FuzzAgentFrames(f, opencode.Module(), result, seeds, func(frame []byte) [][]byte {
		return [][]byte{launch, frame}
	})
}

// FuzzOpenCodeDifferential: a session, the same session with every
// frame spelled otherwise (blanks, escaped key and value characters,
// reordered members) and the same session with decoy members before some
// members under the same key (a parser reads the last one) get the same
// verdicts and snapshots, frame for frame. Seeds: the golden cases and the
// small recordings.
func FuzzOpenCodeDifferential(f *testing.F) {
	routetest.FuzzDifferential(f, capturesDir, opencode.Module())
}

package codex_test

import (
	"path/filepath"
	"testing"

	"github.com/acp-normalize/acp-normalize/rewrite/codex"
	"github.com/acp-normalize/acp-normalize/route/routetest"
)

// FuzzCodex feeds arbitrary agent frames to the codex module on a Codex
// connection, each followed by a wait-call frame about the child thread
// "T1": the module must never panic (P5 turns errors into forwarding),
// never drop an object frame, forward a frame it leaves alone byte for
// byte (P1), and write only valid JSON for a valid JSON frame.
func FuzzCodex(f *testing.F) {
	seeds := []string{
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"S","update":{"sessionUpdate":"tool_call","toolCallId":"c","title":"spawnAgent","status":"in_progress","rawInput":{"prompt":"p","senderThreadId":"S","receiverThreadIds":["T1"],"agentsStates":{"T1":{"status":"pendingInit"}}}}}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"S","update":{"sessionUpdate":"tool_call_update","toolCallId":"c","title":"spawnAgent","status":"completed","rawInput":{"senderThreadId":1,"receiverThreadIds":[7],"agentsStates":[]},"_meta":"x"}}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"S","update":{"sessionUpdate":"tool_call","toolCallId":"c","title":"spawnAgent","rawInput":{"senderThreadId":"S","receiverThreadIds":["T1"]},"_meta":{"acp-normalize":7}}}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"S","update":{"sessionUpdate":"tool_call","toolCallId":"c","title":"spawnAgent","rawInput":{"senderThreadId":"S","receiverThreadIds":["T1","T2"],"prompt":"` + "\\u00e9\\n" + `"}}}}`,
		`{"jsonrpc":"2.0","method":"session/close","params":{"sessionId":"S"}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"agentInfo":{"name":"@agentclientprotocol/codex-acp"}}}`,
		`not json "agentsStates"`,
	}
	result := []byte(`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentInfo":{"name":"@agentclientprotocol/codex-acp"},"agentCapabilities":{}}}`)
	wait := []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"S","update":{"sessionUpdate":"tool_call_update","toolCallId":"w","status":"completed","rawInput":{"receiverThreadIds":["T1"],"agentsStates":{"T1":{"status":"completed","message":"m"}}}}}}`)
	routetest.FuzzAgentFrames(f, codex.Module(), result, seeds, func(frame []byte) [][]byte {
		return [][]byte{frame, wait, frame}
	})
}

// FuzzCodexDifferential: a session, the same session with every
// frame spelled otherwise (blanks, escaped key and value characters,
// reordered members) and the same session with decoy members before some
// members under the same key (a parser reads the last one) get the same
// verdicts and snapshots, frame for frame. Seeds: the golden cases and the
// small recordings.
func FuzzCodexDifferential(f *testing.F) {
	routetest.FuzzDifferential(f, filepath.Join(capturesDir, "codex"), codex.Module())
}

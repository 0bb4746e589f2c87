package gemini_test

import (
	"path/filepath"
	"testing"

	"github.com/acp-normalize/acp-normalize/rewrite/gemini"
	"github.com/acp-normalize/acp-normalize/route/routetest"
)

// FuzzGemini feeds arbitrary agent frames to the gemini module on a
// Gemini CLI connection, each followed by an update of a launch call: the
// module must never panic (P5 turns errors into forwarding), never drop an
// object frame, forward a frame it leaves alone byte for byte (P1), and
// write only valid JSON for a valid JSON frame.
func FuzzGemini(f *testing.F) {
	seeds := []string{
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"S","update":{"sessionUpdate":"tool_call","toolCallId":"invoke_agent__a_0","status":"in_progress","title":"Delegating to agent 'cli_help'","content":[],"kind":"think"}}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"S","update":{"sessionUpdate":"tool_call_update","toolCallId":"invoke_agent__a_0","status":"completed","title":"Delegating to agent '","content":[{"type":"content","content":{"type":"text","text":7}}],"_meta":[]}}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"S","update":{"sessionUpdate":"tool_call_update","toolCallId":"invoke_agent__a_0","status":"failed","content":"x","_meta":{"acp-normalize":"y"}}}}`,
		`{"jsonrpc":"2.0","method":"session/close","params":{"sessionId":"S"}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"agentInfo":{"name":"gemini-cli"}}}`,
		`not json "invoke_agent__`,
	}
	result := []byte(`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentInfo":{"name":"gemini-cli"},"agentCapabilities":{}}}`)
	next := []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"S","update":{"sessionUpdate":"tool_call_update","toolCallId":"invoke_agent__a_0","status":"completed"}}}`)
	routetest.FuzzAgentFrames(f, gemini.Module(), result, seeds, func(frame []byte) [][]byte {
		return [][]byte{frame, next, frame}
	})
}

// FuzzGeminiDifferential: a session, the same session with every
// frame spelled otherwise (blanks, escaped key and value characters,
// reordered members) and the same session with decoy members before some
// members under the same key (a parser reads the last one) get the same
// verdicts and snapshots, frame for frame. Seeds: the golden cases and the
// small recordings.
func FuzzGeminiDifferential(f *testing.F) {
	routetest.FuzzDifferential(f, filepath.Join(capturesDir, "gemini"), gemini.Module())
}

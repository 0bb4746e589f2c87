package gemini_test

import (
	"testing"

	"github.com/acp-normalize/acp-normalize/proxy/proxytest"
	"github.com/acp-normalize/acp-normalize/rewrite/gemini"
)

// TestM_ForgedSnapshotOverwritten pins issue 14 item 2 (rule M) for
// Gemini: a launch frame's own _meta["acp-normalize"], whatever its
// shape, never reaches the client in place of the module's snapshot.
func TestM_ForgedSnapshotOverwritten(t *testing.T) {
	proxytest.CheckForgedSnapshot(t, gemini.Module(), proxytest.Connection(gemini.AgentName),
		[]byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"S","update":{"sessionUpdate":"tool_call","toolCallId":"invoke_agent__a_0","status":"in_progress","title":"Delegating to agent 'cli_help'","content":[],"kind":"think"}}}`))
}

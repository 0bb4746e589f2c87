package claude_test

import (
	"testing"

	"github.com/acp-normalize/acp-normalize/proxy/proxytest"
	"github.com/acp-normalize/acp-normalize/rewrite/claude"
)

// TestM_ForgedSnapshotOverwritten pins issue 14 item 2 (rule M) for
// Claude: a launch frame's own _meta["acp-normalize"], whatever its
// shape, never reaches the client in place of the module's snapshot.
func TestM_ForgedSnapshotOverwritten(t *testing.T) {
	proxytest.CheckForgedSnapshot(t, claude.Module(), nil,
		[]byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess-1","update":{"_meta":{"claudeCode":{"toolName":"Agent"}},"toolCallId":"toolu_A","sessionUpdate":"tool_call","name":"Agent","rawInput":{"description":"count"},"status":"pending","title":"Task","kind":"think","content":[]}}}`))
}

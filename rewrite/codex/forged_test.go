package codex_test

import (
	"testing"

	"github.com/acp-normalize/acp-normalize/proxy/proxytest"
	"github.com/acp-normalize/acp-normalize/rewrite/codex"
)

// TestM_ForgedSnapshotOverwritten pins issue 14 item 2 (rule M) for
// Codex: a launch frame's own _meta["acp-normalize"], whatever its shape,
// never reaches the client in place of the module's snapshot.
func TestM_ForgedSnapshotOverwritten(t *testing.T) {
	proxytest.CheckForgedSnapshot(t, codex.Module(), proxytest.Connection(codex.AgentName),
		[]byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"S","update":{"sessionUpdate":"tool_call","toolCallId":"c1","title":"spawnAgent","status":"in_progress","rawInput":{"prompt":"Read notes.txt","senderThreadId":"S","receiverThreadIds":["T1"]}}}}`))
}

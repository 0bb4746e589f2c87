package cursor_test

import (
	"testing"

	"github.com/acp-normalize/acp-normalize/proxy/proxytest"
	"github.com/acp-normalize/acp-normalize/rewrite/cursor"
)

// TestM_ForgedSnapshotOverwritten pins issue 14 item 2 (rule M) for
// Cursor: a task call's own _meta["acp-normalize"], whatever its shape,
// never reaches the client in place of the module's snapshot.
func TestM_ForgedSnapshotOverwritten(t *testing.T) {
	proxytest.CheckForgedSnapshot(t, cursor.Module(), proxytest.Connection(""),
		[]byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess-a","update":{"sessionUpdate":"tool_call","toolCallId":"m1","title":"Task: x","kind":"other","status":"pending","rawInput":{"_toolName":"task","description":"x"}}}}`))
}

package opencode_test

import (
	"testing"

	"github.com/acp-normalize/acp-normalize/proxy/proxytest"
	"github.com/acp-normalize/acp-normalize/rewrite/opencode"
)

// TestM_ForgedSnapshotOverwritten pins issue 14 item 2 (rule M) for
// OpenCode: a launch frame's own _meta["acp-normalize"], whatever its
// shape, never reaches the client in place of the module's snapshot.
func TestM_ForgedSnapshotOverwritten(t *testing.T) {
	proxytest.CheckForgedSnapshot(t, opencode.Module(), proxytest.Connection("OpenCode"),
		[]byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"ses_1","update":{"sessionUpdate":"tool_call","toolCallId":"call_1","title":"task","kind":"think","status":"pending","rawInput":{"description":"Read notes file"}}}}`))
}

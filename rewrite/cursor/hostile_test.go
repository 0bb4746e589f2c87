package cursor_test

import (
	"testing"

	"github.com/acp-normalize/acp-normalize/rewrite/cursor"
	"github.com/acp-normalize/acp-normalize/route/routetest"
)

// hostileLaunch is a launch-call frame the module annotates, hostileRecs
// the connection before it.
var (
	hostileRecs   = routetest.Connection("")
	hostileLaunch = []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess-a","update":{"sessionUpdate":"tool_call","toolCallId":"m1","title":"Task: x","kind":"other","status":"pending","rawInput":{"_toolName":"task","description":"x"}}}}`)
)

// TestM_ForgedSnapshotOverwritten pins rule M for
// Cursor: a launch frame that already carries a _meta["acp-normalize"] (of
// the same byte length as ours, or of any other shape) reaches the client
// with the module's snapshot, never the forgery.
func TestM_ForgedSnapshotOverwritten(t *testing.T) {
	routetest.CheckForgedSnapshot(t, cursor.Module(), hostileRecs, hostileLaunch)
}

// TestP5_MalformedFramesUnchanged pins rule P5 for
// Cursor: a launch frame that is not valid JSON below its envelope, or is
// nested deeper than the limit, goes out byte for byte, with a warning
// that says which.
func TestP5_MalformedFramesUnchanged(t *testing.T) {
	routetest.CheckMalformed(t, cursor.Module(), hostileRecs, hostileLaunch)
}

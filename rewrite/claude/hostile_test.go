package claude_test

import (
	"testing"

	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite/claude"
	"github.com/acp-normalize/acp-normalize/route/routetest"
)

// hostileLaunch is a launch-call frame the module annotates, hostileRecs
// the connection before it.
var (
	hostileRecs   []pipe.Record
	hostileLaunch = []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess-1","update":{"_meta":{"claudeCode":{"toolName":"Agent"}},"toolCallId":"toolu_A","sessionUpdate":"tool_call","name":"Agent","rawInput":{"description":"count"},"status":"pending","title":"Task","kind":"think","content":[]}}}`)
)

// TestM_ForgedSnapshotOverwritten pins rule M for
// Claude: a launch frame that already carries a _meta["acp-normalize"] (of
// the same byte length as ours, or of any other shape) reaches the client
// with the module's snapshot, never the forgery.
func TestM_ForgedSnapshotOverwritten(t *testing.T) {
	routetest.CheckForgedSnapshot(t, claude.Module(), hostileRecs, hostileLaunch)
}

// TestP5_MalformedFramesUnchanged pins rule P5 for
// Claude: a launch frame that is not valid JSON below its envelope, or is
// nested deeper than the limit, goes out byte for byte, with a warning
// that says which.
func TestP5_MalformedFramesUnchanged(t *testing.T) {
	routetest.CheckMalformed(t, claude.Module(), hostileRecs, hostileLaunch)
}

package qwen_test

import (
	"testing"

	"github.com/acp-normalize/acp-normalize/rewrite/qwen"
	"github.com/acp-normalize/acp-normalize/route/routetest"
)

// hostileLaunch is a launch-call frame the module annotates, hostileRecs
// the connection before it.
var (
	hostileRecs   = routetest.Connection("qwen-code")
	hostileLaunch = []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call_update","toolCallId":"call_1","status":"in_progress","title":"Agent: Read notes file","rawInput":{"description":"Read notes file","prompt":"Read notes.txt."},"_meta":{"toolName":"agent"}}}}`)
)

// TestM_ForgedSnapshotOverwritten pins rule M for
// Qwen: a launch frame that already carries a _meta["acp-normalize"] (of
// the same byte length as ours, or of any other shape) reaches the client
// with the module's snapshot, never the forgery.
func TestM_ForgedSnapshotOverwritten(t *testing.T) {
	routetest.CheckForgedSnapshot(t, qwen.Module(), hostileRecs, hostileLaunch)
}

// TestP5_MalformedFramesUnchanged pins rule P5 for
// Qwen: a launch frame that is not valid JSON below its envelope, or is
// nested deeper than the limit, goes out byte for byte, with a warning
// that says which.
func TestP5_MalformedFramesUnchanged(t *testing.T) {
	routetest.CheckMalformed(t, qwen.Module(), hostileRecs, hostileLaunch)
}

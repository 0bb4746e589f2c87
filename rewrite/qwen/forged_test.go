package qwen_test

import (
	"testing"

	"github.com/acp-normalize/acp-normalize/proxy/proxytest"
	"github.com/acp-normalize/acp-normalize/rewrite/qwen"
)

// TestM_ForgedSnapshotOverwritten pins issue 14 item 2 (rule M): a launch
// frame that already carries a _meta["acp-normalize"] (of the same byte
// length as ours, or of any other shape) reaches the client with the
// module's snapshot, never the forgery.
func TestM_ForgedSnapshotOverwritten(t *testing.T) {
	proxytest.CheckForgedSnapshot(t, qwen.Module(), proxytest.Connection("qwen-code"),
		[]byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call_update","toolCallId":"call_1","status":"in_progress","title":"Agent: Read notes file","rawInput":{"description":"Read notes file","prompt":"Read notes.txt."},"_meta":{"toolName":"agent"}}}}`))
}

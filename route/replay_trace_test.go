package route

import (
	"strings"
	"testing"
	"time"

	"github.com/acp-normalize/acp-normalize/pipe"
)

// TestReplayTraceConnections: an acp-inspector trace of two connections
// replays as two connections (rule R3 for each), as two captures would:
// the first ends as a capture without an exit event does (the client's
// open request gets nothing: no agent exited), the second starts with a
// "connection" event and a fresh router, which sees its own initialize.
func TestReplayTraceConnections(t *testing.T) {
	frame := func(conn, dir, f string) string {
		var b []byte
		side := pipe.Client
		if dir == "a" {
			side = pipe.Agent
		}
		b = pipe.AppendTraceFrame(b, time.Time{}, 0, side, []byte(f))
		return strings.Replace(string(b), `"connection":0`, `"connection":`+conn, 1)
	}
	trace := `{"type":"header","format":"acp-inspector-trace","version":1,"at":0,"frames":4,"dropped":0,"warning":""}` + "\n" +
		frame("1", "c", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`) +
		frame("1", "a", `{"jsonrpc":"2.0","id":1,"result":{"agentCapabilities":{}}}`) +
		frame("2", "c", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`) +
		frame("2", "a", `{"jsonrpc":"2.0","id":1,"result":{"agentCapabilities":{}}}`)
	got := replayAll(t, trace, RouterConfig{Version: "test"})
	want := []string{
		`frame@2 client:{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}} | forward>agent {"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`,
		`frame@3 agent:{"jsonrpc":"2.0","id":1,"result":{"agentCapabilities":{}}} | replace>client {"jsonrpc":"2.0","id":1,"result":{"agentCapabilities":{"_meta":{"acp-normalize":{"modules":[],"version":"test"}}}}}`,
		`end@0`,
		`event@4 connection`,
		`frame@4 client:{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}} | forward>agent {"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`,
		`frame@5 agent:{"jsonrpc":"2.0","id":1,"result":{"agentCapabilities":{}}} | replace>client {"jsonrpc":"2.0","id":1,"result":{"agentCapabilities":{"_meta":{"acp-normalize":{"modules":[],"version":"test"}}}}}`,
		`end@0`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

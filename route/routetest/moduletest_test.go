package routetest_test

import (
	"reflect"
	"testing"

	"github.com/acp-normalize/acp-normalize/rewrite/rewritetest"
	"github.com/acp-normalize/acp-normalize/route/routetest"
)

func TestRouteFormatSnapshots(t *testing.T) {
	capture := []byte(`{"seq":1,"ts":"2026-12-01T00:00:00Z","event":"start","version":"x","agent":["a"]}
{"from":"client","frame":{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}}
{"from":"agent","stderr":"ignored"}
{"from":"agent","frame":{"jsonrpc":"2.0","id":0,"result":{"agentCapabilities":{}}}}
{"from":"agent","frame":{"jsonrpc":"2.0","method":"test/noise"}}
{"from":"agent","frame":{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"S","update":{"sessionUpdate":"tool_call","toolCallId":"T","rawInput":{"_toolName":"task"},"_meta":{"acp-normalize":{"subagent":{"vendor":"v","status":"running"}}}}}}}
`)
	recs := routetest.ReadRecords(t, capture)
	if len(recs) != 4 {
		t.Fatalf("%d input records, want 4 (the start event and stderr left out)", len(recs))
	}
	got := string(routetest.Format(routetest.Route(t, recs, nil, rewritetest.Module())))
	want := `{"to":"agent","frame":{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}}
{"to":"client","op":"replace","frame":{"jsonrpc":"2.0","id":0,"result":{"agentCapabilities":{"_meta":{"acp-normalize":{"modules":["test"],"version":"0.0.0-test"}}}}}}
{"to":"client","op":"replace","frame":{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"S","update":{"sessionUpdate":"tool_call","toolCallId":"T","rawInput":{"_toolName":"task"},"_meta":{"acp-normalize":{"subagent":{"vendor":"v","status":"running"}}},"name":"task"}}}}
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	snaps := routetest.Snapshots(t, routetest.Route(t, recs, nil, rewritetest.Module()))
	if wantSnaps := map[string]map[string]any{"S/T": {"vendor": "v", "status": "running"}}; !reflect.DeepEqual(snaps, wantSnaps) {
		t.Errorf("snapshots %v, want %v", snaps, wantSnaps)
	}
	inert := string(routetest.Format(routetest.Route(t, recs, nil, routetest.Inert(rewritetest.Module().Name))))
	if inert == got {
		t.Error("the inert module changed frames as the real one did")
	}
}

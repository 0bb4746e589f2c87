package routetest

import (
	"bytes"
	"strings"
	"testing"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/rewrite/meta"
)

// CheckForgedSnapshot checks that a module that rewrites a launch frame
// writes its own snapshot over whatever the frame already carries at
// _meta["acp-normalize"] (rule M: a forgery of the same byte
// length as the real snapshot reached the client). recs are routed
// through a Router with mod, then launch, a launch-call frame the module
// annotates; then again with launch carrying each kind of forgery. The
// snapshots the client receives must be the same every time. (A nested
// proxy's snapshot is safe: the outer proxy turns off the modules the
// inner one advertises, rule M.)
func CheckForgedSnapshot(t *testing.T, mod rewrite.Module, recs []pipe.Record, launch []byte) {
	t.Helper()
	run := func(frame []byte) [][]byte {
		all := append(append([]pipe.Record(nil), recs...), pipe.Record{From: pipe.Agent, Frame: frame})
		var snaps [][]byte
		for _, o := range Route(t, all, nil, mod) {
			if o.To != pipe.Client {
				continue
			}
			if s, ok := rawjson.Lookup(Described(o.Frame), "_meta", meta.Key, meta.SubagentMember); ok {
				snaps = append(snaps, s)
			}
		}
		return snaps
	}
	want := run(launch)
	if len(want) == 0 {
		t.Fatalf("the launch frame got no snapshot: %s", launch)
	}
	ours := want[len(want)-1]
	// The same length as ours, other content: every letter of the
	// vendor's name becomes an x.
	vendor, _ := rawjson.Lookup(ours, "vendor")
	sameLength, err := rawjson.Set(ours, rawjson.Text(strings.Repeat("x", len(vendor)-2)), "vendor")
	if err != nil {
		t.Fatal(err)
	}
	if len(sameLength) != len(ours) || bytes.Equal(sameLength, ours) {
		t.Fatalf("no same-length forgery of %s: %s", ours, sameLength)
	}
	obj := describedPath(launch)
	for _, tc := range []struct {
		name  string
		path  []string
		value string
	}{
		{"same length as ours", []string{meta.Key, meta.SubagentMember}, string(sameLength)},
		{"another snapshot", []string{meta.Key, meta.SubagentMember}, `{"vendor":"forged","status":"completed"}`},
		{"snapshot not an object", []string{meta.Key, meta.SubagentMember}, `"forged"`},
		{"key not an object", []string{meta.Key}, `"forged"`},
		{"key an array", []string{meta.Key}, `[{"subagent":{"vendor":"forged"}}]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			forged, err := rawjson.Set(launch, []byte(tc.value), append(append(obj, "_meta"), tc.path...)...)
			if err != nil {
				t.Fatal(err)
			}
			got := run(forged)
			if len(got) != len(want) {
				t.Fatalf("%d snapshots reached the client, %d without the forgery:\n%s", len(got), len(want), forged)
			}
			for i := range got {
				if !bytes.Equal(got[i], want[i]) {
					t.Errorf("snapshot %d is not the module's:\n got %s\nwant %s", i+1, got[i], want[i])
				}
			}
		})
	}
}

// describedPath is the path of the object Described returns.
func describedPath(frame []byte) []string {
	if env := pipe.Peek(frame); env.MethodIs("session/request_permission") {
		return []string{"params", "toolCall"}
	}
	return []string{"params", "update"}
}

// Connection returns the records that open a connection: the client's
// initialize request (id 0) and the agent's result, naming agent in
// agentInfo.name when it is not "" (rule V1).
func Connection(agent string) []pipe.Record {
	result := `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{}}}`
	if agent != "" {
		result = `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentInfo":{"name":` + string(rawjson.Text(agent)) + `},"agentCapabilities":{}}}`
	}
	return []pipe.Record{
		{From: pipe.Client, Frame: []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`)},
		{From: pipe.Agent, Frame: []byte(result)},
	}
}

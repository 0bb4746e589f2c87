package codex_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/rewrite/codex"
	"github.com/acp-normalize/acp-normalize/rewrite/rewritetest"
	"github.com/acp-normalize/acp-normalize/route"
)

// codexRouter returns a Router with the codex module on a Codex
// connection (the client's initialize, the result naming codex-acp).
func codexRouter(t *testing.T) *route.Router {
	t.Helper()
	r, err := route.NewRouter(route.RouterConfig{Modules: []rewrite.Module{codex.Module()}, Version: "0"})
	if err != nil {
		t.Fatal(err)
	}
	r.Handle(pipe.Client, []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`), nil)
	r.Handle(pipe.Agent, []byte(`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentInfo":{"name":"@agentclientprotocol/codex-acp"},"agentCapabilities":{}}}`), nil)
	return r
}

// spawn is the launch call c of child thread child, with a prompt.
func spawn(c, child, prompt string) []byte {
	return []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"S","update":{"sessionUpdate":"tool_call","toolCallId":"` + c +
		`","title":"spawnAgent","status":"in_progress","rawInput":{"prompt":` + string(rawjson.Text(prompt)) +
		`,"senderThreadId":"S","receiverThreadIds":["` + child + `"],"agentsStates":{"` + child + `":{"status":"pendingInit"}}}}}}`)
}

// wait is a wait call's frame with the given agentsStates members.
func wait(members string) []byte {
	return []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"S","update":{"sessionUpdate":"tool_call_update","toolCallId":"w","status":"in_progress","rawInput":{"receiverThreadIds":["T1"],"agentsStates":{` + members + `}}}}}`)
}

// TestV5OneUpdatePerLaunchCall pins V5, P6: a wait
// frame whose agentsStates names the same child thousands of times
// (duplicate keys, statuses alternating) is read as a JSON parser reads
// it, the last member winning: the launch call gets one update with the
// last state, and routing the frame costs a small multiple of its size
// (before: one update per member whose status changed, all held before
// sending: 60,000 members made 958 MiB).
func TestV5OneUpdatePerLaunchCall(t *testing.T) {
	r := codexRouter(t)
	prompt := strings.Repeat("p", 16<<10)
	r.Handle(pipe.Agent, spawn("c1", "T1", prompt), nil)
	const n = 6000
	var members []string
	for i := range n {
		status := "pendingInit"
		if i%2 == 1 {
			status = "running"
		}
		members = append(members, `"T1":{"status":"`+status+`"}`)
	}
	frame := wait(strings.Join(members, ","))
	var outs []route.Out
	alloc := rewritetest.AllocatedBy(func() { outs = r.Handle(pipe.Agent, frame, nil) })
	var emitted [][]byte
	for _, o := range outs {
		if o.Op == pipe.OpEmit {
			emitted = append(emitted, o.Frame)
		}
	}
	if len(emitted) != 1 {
		t.Fatalf("%d updates emitted for one launch call, want 1", len(emitted))
	}
	if status, _ := rawjson.LookupString(emitted[0], "params", "update", "_meta", "acp-normalize", "subagent", "raw", "agentStatus"); status != "running" {
		t.Errorf("agentStatus %q, want the last member's (running)", status)
	}
	if limit := uint64(4 * (len(frame) + len(prompt))); alloc > limit {
		t.Errorf("routing a %d-byte wait frame allocated %d bytes, want at most %d", len(frame), alloc, limit)
	}
}

// TestV5LastStateWins: among duplicate agentsStates members the last one
// is the child's state (as encoding/json reads the object), also when an
// earlier duplicate was final; and the updates follow the launch calls'
// order, not the members' (a re-encoded frame gets the same verdict).
func TestV5LastStateWins(t *testing.T) {
	tests := []struct {
		name    string
		members string
		want    []string // agentStatus of each update, in order
	}{
		{"final then running", `"T1":{"status":"completed","message":"m"},"T1":{"status":"running"}`, []string{"running"}},
		{"running then final", `"T1":{"status":"running"},"T1":{"status":"completed","message":"m"}`, []string{"completed"}},
		{"escaped duplicate", `"T1":{"status":"running"},"\u00541":{"status":"errored"}`, []string{"errored"}},
		{"two children", `"T2":{"status":"running"},"T1":{"status":"running"}`, []string{"running", "running"}},
		{"unchanged last", `"T1":{"status":"running"},"T1":{"status":"pendingInit"}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := codexRouter(t)
			r.Handle(pipe.Agent, spawn("c1", "T1", "one"), nil)
			r.Handle(pipe.Agent, spawn("c2", "T2", "two"), nil)
			var got []string
			var calls []string
			for _, o := range r.Handle(pipe.Agent, wait(tt.members), nil) {
				if o.Op != pipe.OpEmit {
					continue
				}
				s, _ := rawjson.LookupString(o.Frame, "params", "update", "_meta", "acp-normalize", "subagent", "raw", "agentStatus")
				id, _ := rawjson.LookupString(o.Frame, "params", "update", "toolCallId")
				got, calls = append(got, s), append(calls, id)
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("updates %v (calls %v), want %v", got, calls, tt.want)
			}
			if len(calls) == 2 && calls[0]+calls[1] != "c1c2" {
				t.Errorf("updates for %v, want the launch calls' order c1, c2", calls)
			}
		})
	}
}

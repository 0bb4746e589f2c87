package opencode_test

import (
	"encoding/json"
	"testing"

	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/proxy"
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/rewrite/opencode"
)

// FuzzOpenCode feeds arbitrary agent frames to the opencode module after
// an OpenCode initialize result and a task call. Whatever the frame, the
// router must not panic, every output must be valid JSON when the input
// was (P5), and a frame the module leaves alone is byte-identical (P1).
func FuzzOpenCode(f *testing.F) {
	seeds := []string{
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call_update","toolCallId":"call_1","status":"completed","title":"task","rawInput":{"description":"d","background":true},"rawOutput":{"output":"<task_result>x</task_result>","metadata":{"sessionId":"c","jobId":"j","model":{"modelID":"m","providerID":"p"}}}}}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call_update","toolCallId":"call_1","content":[{"content":{"text":"<task_result>"}}],"rawOutput":{"metadata":7}}}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call","toolCallId":"call_1","title":"task"}}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call_update","toolCallId":"call_1","title":7,"rawInput":[1]}}}`,
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	prelude := [][]byte{
		[]byte(`{"jsonrpc":"2.0","id":0,"result":{"agentInfo":{"name":"OpenCode"}}}`),
		[]byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call","toolCallId":"call_1","title":"task","rawInput":{}}}}`),
	}
	f.Fuzz(func(t *testing.T, frame []byte) {
		r, err := proxy.NewRouter(proxy.RouterConfig{Modules: []rewrite.Module{opencode.Module()}, Version: "0"})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range prelude {
			r.Handle(pipe.Agent, p, nil)
		}
		valid := json.Valid(frame)
		for _, o := range r.Handle(pipe.Agent, frame, nil) {
			if valid && !json.Valid(o.Frame) {
				t.Fatalf("invalid output %s for input %s", o.Frame, frame)
			}
			if o.Op == "" && string(o.Frame) != string(frame) {
				t.Fatalf("forwarded frame changed: %s -> %s", frame, o.Frame)
			}
		}
	})
}

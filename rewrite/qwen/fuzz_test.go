package qwen_test

import (
	"encoding/json"
	"testing"

	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/proxy"
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/rewrite/qwen"
)

// FuzzQwen feeds arbitrary agent frames to the qwen module after a
// qwen-code initialize result and a launch call. Whatever the frame, the
// router must not panic, every output must be valid JSON when the input
// was (P5: a rule that fails forwards the frame unchanged), and a frame
// the module leaves alone is byte-identical (P1).
func FuzzQwen(f *testing.F) {
	seeds := []string{
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call_update","toolCallId":"call_1","status":"completed","title":"Agent","rawInput":{"description":"d","run_in_background":true},"rawOutput":{"type":"task_execution","status":"background","executionSummary":{"totalDurationMs":5}},"_meta":{"toolName":"agent"}}}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","_meta":{"parentToolCallId":"call_1","backgroundTask":{"taskId":"t","status":"completed","toolUseId":"call_1"}}}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"session/request_permission","params":{"sessionId":"s1","toolCall":{"toolCallId":"call_2","_meta":{"parentToolCallId":7}}}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call","toolCallId":"call_1","_meta":{"toolName":"task"},"title":"Task"}}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call","toolCallId":"call_1","_meta":"x","rawInput":[1]}}}`,
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	prelude := [][]byte{
		[]byte(`{"jsonrpc":"2.0","id":0,"result":{"agentInfo":{"name":"qwen-code"}}}`),
		[]byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call","toolCallId":"call_1","title":"Agent","rawInput":{},"_meta":{"toolName":"agent"}}}}`),
	}
	f.Fuzz(func(t *testing.T, frame []byte) {
		r, err := proxy.NewRouter(proxy.RouterConfig{Modules: []rewrite.Module{qwen.Module()}, Version: "0"})
		if err != nil {
			t.Fatal(err)
		}
		r.Handle(pipe.Client, []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`), nil)
		for _, p := range prelude {
			r.Handle(pipe.Agent, p, nil)
		}
		outs := r.Handle(pipe.Agent, frame, nil)
		valid := json.Valid(frame)
		for _, o := range outs {
			if valid && !json.Valid(o.Frame) {
				t.Fatalf("invalid output %s for input %s", o.Frame, frame)
			}
			if o.Op == "" && string(o.Frame) != string(frame) {
				t.Fatalf("forwarded frame changed: %s -> %s", frame, o.Frame)
			}
		}
	})
}

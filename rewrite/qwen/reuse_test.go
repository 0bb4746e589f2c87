package qwen_test

import (
	"bytes"
	"testing"

	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/rewrite/qwen"
	"github.com/acp-normalize/acp-normalize/route"
)

// TestChildLinkOutlivesFrameBytes pins V4 when the proxy reuses its read
// buffer, as the live relay does: the parent id remembered from a child
// tool call must not point into that buffer, or a later permission
// request for the child carries whatever bytes the buffer holds then.
func TestChildLinkOutlivesFrameBytes(t *testing.T) {
	r, err := route.NewRouter(route.RouterConfig{Modules: []rewrite.Module{qwen.Module()}, Version: "0"})
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 0, 1024)
	handle := func(frame string) []route.Out {
		buf = append(buf[:0], frame...)
		outs := r.Handle(pipe.Agent, buf, nil)
		for i := range outs {
			outs[i].Frame = bytes.Clone(outs[i].Frame)
		}
		return outs
	}
	r.Handle(pipe.Client, []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`), nil)
	handle(`{"jsonrpc":"2.0","id":0,"result":{"agentInfo":{"name":"qwen-code"}}}`)
	handle(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call","toolCallId":"c3","title":"Shell","_meta":{"toolName":"run_shell_command","parentToolCallId":"call_1"}}}}`)
	handle(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"overwrite every byte of the earlier frame with other text"}}}}`)
	outs := handle(`{"jsonrpc":"2.0","id":1,"method":"session/request_permission","params":{"sessionId":"s1","options":[],"toolCall":{"toolCallId":"c3","_meta":{"toolName":"run_shell_command"}}}}`)
	want := `"acp-normalize":{"parentToolCallId":"call_1"}`
	if len(outs) != 1 || !bytes.Contains(outs[0].Frame, []byte(want)) {
		t.Fatalf("permission request for the child: %s, want it to carry %s", outs[0].Frame, want)
	}
}

// TestSnapshotNumbersOutliveFrameBytes: the snapshot's numbers (V2:
// durationMs, totalTokens, toolUseCount) are kept past the frame that
// carried them, whatever the read buffer holds later.
func TestSnapshotNumbersOutliveFrameBytes(t *testing.T) {
	r, err := route.NewRouter(route.RouterConfig{Modules: []rewrite.Module{qwen.Module()}, Version: "0"})
	if err != nil {
		t.Fatal(err)
	}
	r.Handle(pipe.Client, []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`), nil)
	buf := make([]byte, 0, 1024)
	var last []route.Out
	for _, frame := range []string{
		`{"jsonrpc":"2.0","id":0,"result":{"agentInfo":{"name":"qwen-code"}}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call_update","toolCallId":"call_1","status":"completed","rawOutput":{"type":"task_execution","status":"completed","executionSummary":{"totalDurationMs":1098,"totalTokens":240,"totalToolCalls":1}},"_meta":{"toolName":"agent"}}}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}}}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call_update","toolCallId":"call_1","_meta":{"toolName":"agent"}}}}`,
	} {
		buf = append(buf[:0], frame...)
		last = r.Handle(pipe.Agent, buf, nil)
	}
	want := `"status":"completed","durationMs":1098,"totalTokens":240,"toolUseCount":1`
	if len(last) != 1 || !bytes.Contains(last[0].Frame, []byte(want)) {
		t.Fatalf("later frame of the call: %s, want a snapshot with %s", last[0].Frame, want)
	}
}

package launch_test

import (
	"testing"

	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/rewrite/launch"
)

func TestToolCallOf(t *testing.T) {
	tests := []struct {
		name  string
		frame string
		want  launch.ToolCall
		ok    bool
	}{
		{"tool_call", `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"S","update":{"sessionUpdate":"tool_call","toolCallId":"T"}}}`,
			launch.ToolCall{Update: []byte(`{"sessionUpdate":"tool_call","toolCallId":"T"}`), Tag: "tool_call", Key: launch.Key{Session: "S", ToolCallID: "T"}}, true},
		{"tool_call_update", `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"S","update":{"sessionUpdate":"tool_call_update","toolCallId":""}}}`,
			launch.ToolCall{Update: []byte(`{"sessionUpdate":"tool_call_update","toolCallId":""}`), Tag: "tool_call_update", Key: launch.Key{Session: "S"}}, true},
		{"other update", `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"S","update":{"sessionUpdate":"plan","toolCallId":"T"}}}`, launch.ToolCall{}, false},
		{"no toolCallId", `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"S","update":{"sessionUpdate":"tool_call"}}}`, launch.ToolCall{}, false},
		{"toolCallId not a string", `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"S","update":{"sessionUpdate":"tool_call","toolCallId":7}}}`, launch.ToolCall{}, false},
		{"update not an object", `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"S","update":[1]}}`, launch.ToolCall{}, false},
		{"no update", `{"jsonrpc":"2.0","method":"session/update","params":{}}`, launch.ToolCall{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := launch.ToolCallOf(&rewrite.Frame{From: pipe.Agent, Raw: []byte(tt.frame)})
			if ok != tt.ok || string(got.Update) != string(tt.want.Update) || got.Tag != tt.want.Tag || got.Key != tt.want.Key {
				t.Errorf("ToolCallOf = %+v, %v; want %+v, %v", got, ok, tt.want, tt.ok)
			}
			if ok && got.Starts() != (tt.want.Tag == "tool_call") {
				t.Errorf("Starts() = %v for tag %q", got.Starts(), got.Tag)
			}
		})
	}
}

func TestNewTableCountsKeyAndValue(t *testing.T) {
	calls := launch.NewTable(rewrite.Env{}, "test calls", func(v string) int64 { return int64(len(v)) })
	calls.Put(launch.Key{Session: "S1", ToolCallID: "T"}, "four")
	calls.Put(launch.Key{Session: "S2", ToolCallID: "T"}, "x")
	if got, want := calls.Bytes(), int64(len("S1T")+len("four")+len("S2T")+len("x")); got != want {
		t.Errorf("Bytes() = %d, want %d", got, want)
	}
	if n := calls.DropSession("S1"); n != 1 {
		t.Errorf("DropSession(S1) dropped %d, want 1", n)
	}
	if _, ok := calls.Get(launch.Key{Session: "S2", ToolCallID: "T"}); !ok {
		t.Error("the other session's call was dropped (P6)")
	}
}

func TestRoute(t *testing.T) {
	const (
		update = `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"S","update":{}}}`
		closeS = `{"jsonrpc":"2.0","id":3,"method":"session/close","params":{"sessionId":"S"}}`
		other  = `{"jsonrpc":"2.0","id":4,"method":"session/prompt","params":{"sessionId":"S"}}`
	)
	tests := []struct {
		name        string
		vendor      string // --vendor
		from        pipe.Side
		frame       string
		wantUpdates int
		wantCalls   int
	}{
		{"unknown agent: nothing", "", pipe.Agent, update, 0, 1},
		{"unknown agent: close keeps state", "", pipe.Client, closeS, 0, 1},
		{"known agent: update handled", "test", pipe.Agent, update, 1, 1},
		{"known agent: close drops the session", "test", pipe.Client, closeS, 0, 0},
		{"known agent: other frame ignored", "test", pipe.Client, other, 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := rewrite.Env{Settings: rewrite.Settings{rewrite.VendorOption: tt.vendor}}
			id := rewrite.NewIdentity(env, "test")
			calls := launch.NewTable(env, "test calls", func(int) int64 { return 0 })
			calls.Put(launch.Key{Session: "S", ToolCallID: "T"}, 1)
			updates := 0
			handle := func(*rewrite.Frame) (rewrite.Verdict, error) { updates++; return rewrite.Verdict{}, nil }
			if _, err := launch.Route(&rewrite.Frame{From: tt.from, Raw: []byte(tt.frame)}, id, calls, handle); err != nil {
				t.Fatal(err)
			}
			if updates != tt.wantUpdates || calls.Len() != tt.wantCalls {
				t.Errorf("update called %d times, %d calls left; want %d, %d", updates, calls.Len(), tt.wantUpdates, tt.wantCalls)
			}
		})
	}
}

package trigger

import (
	"bytes"
	"strings"
	"testing"
)

func TestTriggerMemo(t *testing.T) {
	mods := triggerModules([]string{`"cursor/`, `"tool_call"`}, []string{`"claudeCode"`})
	x := New(mods)
	head := `{"jsonrpc":"2.0","method":"session/update","params":{"update":{"sessionUpdate":"agent_message_chunk","content":{"text":"`
	checkMatchMemo(t, x, []matchCase{
		{"first chunk", head + `one"}}}}`, 0},
		{"same envelope", head + `two"}}}}`, 0},
		{"trigger after the shared prefix", head + `three"}},"_meta":{"claudeCode":{}}}}`, 0b10},
		{"trigger straddling the shared prefix", `{"jsonrpc":"2.0","method":"cursor/task"}`, 0b01},
		{"shared prefix ends inside a trigger", head[:len(head)-8] + `"tool_call"}}}`, 0b01},
		{"untriggered look-alike", head + `x"},"k":"tool_callX"}}}`, 0},
		{"trigger sharing all but its last byte with the memo", head + `x"},"k":"tool_call"}}}`, 0b01},
		{"shorter frame", `{"jsonrpc"`, 0},
		{"empty", ``, 0},
		{"after empty", head + `x"}}}}`, 0},
		// A string spelled with an escape in its first characters, which
		// the next frame shares up to within a trigger's length of where
		// the two differ: the quotes there get the other spellings' check
		// too (matchWindow, as matchFrom).
		{"escaped look-alike", `{"a":"\u0063alm","b":1}`, 0},
		{"escaped trigger differing just past the escape", `{"a":"\u0063laudeCode","b":1}`, 0b10},
	})
}

// FuzzTriggerMemo: over any sequence of frames, MatchMemo finds what
// Match finds.
func FuzzTriggerMemo(f *testing.F) {
	f.Add([]byte("{\"method\":\"session/update\",\"x\":\"a\"}\n{\"method\":\"session/update\",\"x\":\"cursor/\"}\n{\"method\":\"cursor/x\"}"))
	// Frames sharing a long envelope (the memo shrinks to it, and starts
	// over every memoReseed frames), then triggers right past it.
	env := `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"text":"`
	var storm []byte
	for i := range 2*memoReseed + 3 {
		storm = append(storm, env+strings.Repeat("x", i%7)+`"}}}}`+"\n"...)
	}
	f.Add(append(storm, env[:len(env)-9]+`"tool_call"}}}}`+"\n"+env+`"},"id":1,"error":{}}}`...))
	f.Add([]byte(env + `"},"k":"tool_call_updat"}}` + "\n" + env + `"},"k":"tool_call_update"}}`))
	// Other spellings whose check reads past the shared
	// prefix: an escape or blanks cut where the next frame differs.
	f.Add([]byte(env + `"},"k":"tool\u005` + "\n" + env + `"},"k":"tool\u005fcall"}}` + "\n" + env + `"},"k":"tool\u005fcal"}}`))
	f.Add([]byte(`{"agentInfo"` + strings.Repeat(" ", 300) + `}` + "\n" + `{"agentInfo"` + strings.Repeat(" ", 300) + `:{}}`))
	f.Add([]byte(`{"toolCallId": "x"}` + "\n" + `{"toolCallId": "invoke_agent__1"}`))
	mods := triggerModules(
		[]string{`"cursor/`, `"_cursor/`, `"tool_call"`, `"tool_call_update"`, `"session/prompt"`, `"error"`},
		[]string{`"claudeCode"`, `"session/close"`, `"id"`, `"agentInfo":`, `"toolCallId":"invoke_agent__`},
	)
	mods[1].UnknownMethods = true
	x := New(mods)
	f.Add([]byte(`{"method":"session/request_permission","p":1}` + "\n" + `{"method":"session/request_permissionX","p":1}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		var m Memo
		for _, frame := range bytes.Split(in, []byte("\n")) {
			if got, want := x.MatchMemo(frame, &m), x.Match(frame); got != want {
				t.Fatalf("MatchMemo(%q) = %b, Match = %b", frame, got, want)
			}
		}
	})
}

// BenchmarkTriggerMemo: a chunk storm, each text different, scanned in
// full (Match) and from where the envelope stops being shared (MatchMemo).
func BenchmarkTriggerMemo(b *testing.B) {
	mods := triggerModules(
		[]string{`"cursor/`, `"_cursor/`, `"tool_call"`, `"tool_call_update"`, `"_toolName"`, `"initialize"`, `"session/prompt"`, `"session/load"`, `"session/cancel"`, `"session/close"`, `"stopReason"`, `"error"`, `"subagent_spawned"`, `"subagent_state_update"`},
		[]string{`"claudeCode"`, `"session/close"`},
	)
	x := New(mods)
	var frames [][]byte
	for i := range 64 {
		frames = append(frames, []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"3f9a1c2e-7b4d-4e8a-9c61-5d2f0b8e4a17","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"chunk `+string(rune('a'+i%26))+` of the answer, with \"quotes\" and <tags> & more text"}}}}`))
	}
	b.Run("match", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			x.Match(frames[i%len(frames)])
		}
	})
	b.Run("memo", func(b *testing.B) {
		var m Memo
		for i := 0; i < b.N; i++ {
			x.MatchMemo(frames[i%len(frames)], &m)
		}
	})
}

// TestTriggerMemoMethod: the method trigger reads the method's value, so
// a value that reaches past the shared prefix is checked again.
func TestTriggerMemoMethod(t *testing.T) {
	mods := triggerModules([]string{`"tool_call"`, `"subagent_state_update"`}, nil)
	mods[1].UnknownMethods = true
	x := New(mods)
	checkMatchMemo(t, x, []matchCase{
		{"standard method", `{"jsonrpc":"2.0","method":"session/request_permission","params":{}}`, 0},
		{"unknown method sharing all but its last byte", `{"jsonrpc":"2.0","method":"session/request_permissionX","params":{}}`, 0b10},
		{"standard again", `{"jsonrpc":"2.0","method":"session/request_permission","params":{"a":1}}`, 0},
		{"cut short", `{"jsonrpc":"2.0","method":"session/request_permissio`, 0},
	})
}

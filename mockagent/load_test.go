package mockagent

import "testing"

// Frames of the load captures below.
const (
	initLoadable = `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{"loadSession":true}}}`
	initPlain    = `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{"loadSession":false}}}`
	cmdsS1       = `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"available_commands_update","availableCommands":[]}}}`
	// A recorded frame with odd spacing: replayed byte for byte.
	hiS1   = `{ "jsonrpc":"2.0", "method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"h\u00e9"}}}}`
	callS1 = `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call","toolCallId":"t","title":"Task","status":"pending"}}}`
	yoS2   = `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s2","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"yo"}}}}`
	// The user's prompts as the load replays them.
	goS1   = `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"user_message_chunk","content":{"type":"text","text":"go"}}}}`
	linkS1 = `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"user_message_chunk","content":{"type":"resource_link","uri":"file:///a","name":"a"}}}}`
	heyS2  = `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s2","update":{"sessionUpdate":"user_message_chunk","content":{"type":"text","text":"hey"}}}}`
)

// twoSessions records two sessions whose turns interleave: s1 with a
// two-block prompt, s2 with one.
func twoSessions(init string) string {
	return lines(
		client(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`),
		agent(init),
		client(`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/w","mcpServers":[]}}`),
		agent(`{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"}}`),
		agent(cmdsS1),
		client(`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/w","mcpServers":[]}}`),
		agent(`{"jsonrpc":"2.0","id":2,"result":{"sessionId":"s2"}}`),
		client(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"go"},{"type":"resource_link","uri":"file:///a","name":"a"}]}}`),
		client(`{"jsonrpc":"2.0","id":4,"method":"session/prompt","params":{"sessionId":"s2","prompt":[{"type":"text","text":"hey"}]}}`),
		agent(hiS1),
		agent(yoS2),
		agent(`{"jsonrpc":"2.0","id":0,"method":"session/request_permission","params":{"sessionId":"s1"}}`),
		agent(callS1),
		agent(`{"jsonrpc":"2.0","id":4,"result":{"stopReason":"end_turn"}}`),
		agent(`{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}`),
	)
}

const liveInit = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientInfo":{"name":"zed"}}}`

func liveLoad(id, sid string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"session/load","params":{"sessionId":` + sid + `,"cwd":"/w","mcpServers":[]}}`
}

// TestMockAgentLoad: a capture whose agent advertised loadSession serves a
// session/load of any session it knows by replaying that session's
// recorded session/update notifications, its prompts as the user's
// message chunks, then {}; an unknown session gets ACP's -32002. A
// capture without the capability keeps -32601 for a load it did not
// record, and a recorded load is played as recorded.
func TestMockAgentLoad(t *testing.T) {
	tests := []struct {
		name    string
		capture string
		live    []string
		want    [][]string
	}{
		{
			name:    "known_session_history_prompt_as_user_chunks_then_empty_result",
			capture: twoSessions(initLoadable),
			live:    []string{liveInit, liveLoad(`"L"`, `"s1"`)},
			want: [][]string{
				nil,
				{`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{"loadSession":true}}}`},
				// No permission request: a load replays the conversation.
				{cmdsS1, goS1, linkS1, hiS1, callS1, `{"jsonrpc":"2.0","id":"L","result":{}}`},
			},
		},
		{
			name:    "several_sessions_each_load_gets_its_own_thread_again_and_again",
			capture: twoSessions(initLoadable),
			live:    []string{liveInit, liveLoad(`7`, `"s2"`), liveLoad(`8`, `"s1"`), liveLoad(`9`, `"s2"`)},
			want: [][]string{
				nil,
				{initLoadable},
				{heyS2, yoS2, `{"jsonrpc":"2.0","id":7,"result":{}}`},
				{cmdsS1, goS1, linkS1, hiS1, callS1, `{"jsonrpc":"2.0","id":8,"result":{}}`},
				{heyS2, yoS2, `{"jsonrpc":"2.0","id":9,"result":{}}`},
			},
		},
		{
			name:    "unknown_session_-32002_with_its_id_bad_id_-32602",
			capture: twoSessions(initLoadable),
			live:    []string{liveInit, liveLoad(`5`, `"s\"3"`), liveLoad(`6`, `42`)},
			want: [][]string{
				nil,
				{initLoadable},
				{`{"jsonrpc":"2.0","id":5,"error":{"code":-32002,"message":"Resource not found: session s\"3 (mock-agent: not in the capture)","data":{"sessionId":"s\"3"}}}`},
				{`{"jsonrpc":"2.0","id":6,"error":{"code":-32602,"message":"Invalid params: session/load needs a string sessionId"}}`},
			},
		},
		{
			name:    "live_session_then_load_of_it",
			capture: twoSessions(initLoadable),
			live: []string{liveInit,
				`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{}}`,
				liveLoad(`2`, `"s1"`)},
			want: [][]string{
				nil,
				{initLoadable},
				{`{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"}}`, cmdsS1},
				{cmdsS1, goS1, linkS1, hiS1, callS1, `{"jsonrpc":"2.0","id":2,"result":{}}`},
			},
		},
		{
			name:    "without_loadSession_a_load_stays_-32601",
			capture: twoSessions(initPlain),
			live:    []string{liveInit, liveLoad(`1`, `"s1"`)},
			want: [][]string{
				nil,
				{initPlain},
				{`{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found: session/load (mock-agent: not in the capture)"}}`},
			},
		},
		{
			name: "recorded_load_played_as_recorded_then_served_from_history_with_its_answer",
			capture: lines(
				client(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`),
				agent(initLoadable),
				agent(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"before the load: not replayed"}}}}`),
				client(`{"jsonrpc":"2.0","id":1,"method":"session/load","params":{"sessionId":"s1","cwd":"/w"}}`),
				agent(goS1),
				agent(hiS1),
				agent(`{"jsonrpc":"2.0","id":1,"result":{"modes":null}}`),
				client(`{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"go"}]}}`),
				agent(callS1),
				agent(`{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}`),
			),
			live: []string{liveInit, liveLoad(`"a"`, `"s1"`), liveLoad(`"b"`, `"s1"`)},
			want: [][]string{
				nil,
				{initLoadable, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"before the load: not replayed"}}}}`},
				{goS1, hiS1, `{"jsonrpc":"2.0","id":"a","result":{"modes":null}}`},
				{goS1, hiS1, goS1, callS1, `{"jsonrpc":"2.0","id":"b","result":{"modes":null}}`},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkServe(t, tt.capture, tt.live, tt.want, "")
		})
	}
}

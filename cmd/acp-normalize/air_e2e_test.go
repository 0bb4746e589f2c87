//go:build unix

package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestE2EJ1AIRNativeSubagents: the real binary, a scripted Claude agent
// in flat mode and a client that declares JetBrains AIR's
// nativeSubagentSessions (rule J1): the initialize answer names the
// capability; the subagent arrives as one subagent_spawned on the
// parent, its tool call on the child, its end as one
// subagent_state_update; no standard session shape reaches AIR.
func TestE2EJ1AIRNativeSubagents(t *testing.T) {
	launch := func(status, extra string) string {
		return `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call` + extra + `","toolCallId":"toolu_1","status":"` + status + `","rawInput":{"description":"Scan","prompt":"List the Go files"},"_meta":{"claudeCode":{"toolName":"Agent"}}}}}`
	}
	s := start(t, script(t,
		"wait initialize",
		`out {"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{"loadSession":true}}}`,
		"wait session/new",
		`out {"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"}}`,
		"wait session/prompt",
		`out `+launch("pending", ""),
		`out {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call","toolCallId":"toolu_2","title":"Read","kind":"read","status":"completed","_meta":{"claudeCode":{"toolName":"Read","parentToolUseId":"toolu_1"}}}}}`,
		`out `+launch("completed", "_update"),
		`out {"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}`,
	), nil)
	s.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"_meta":{"jetbrains":{"air":{"version":1,"capabilities":["nativeSubagentSessions"]}}}}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/w","mcpServers":[]}}`,
		`{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"go"}]}}`)
	s.stdin.Close()
	got := s.readAll()
	if code := s.wait(20 * time.Second); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, s.stderr.String())
	}
	var child string
	var spawned, ended, onChild int
	for _, line := range strings.Split(strings.TrimSpace(got), "\n") {
		var f struct {
			Result *struct {
				Meta struct {
					JetBrains struct {
						Air struct {
							Capabilities []string `json:"capabilities"`
						} `json:"air"`
					} `json:"jetbrains"`
				} `json:"_meta"`
			} `json:"result"`
			Params struct {
				SessionID string `json:"sessionId"`
				Update    struct {
					SessionUpdate     string `json:"sessionUpdate"`
					SubagentSessionID string `json:"subagentSessionId"`
					State             string `json:"state"`
					ToolCallID        string `json:"toolCallId"`
				} `json:"update"`
			} `json:"params"`
		}
		if err := json.Unmarshal([]byte(line), &f); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		if f.Result != nil && strings.Contains(line, `"agentCapabilities"`) && strings.Join(f.Result.Meta.JetBrains.Air.Capabilities, ",") != "nativeSubagentSessions" {
			t.Errorf("the initialize answer does not name nativeSubagentSessions: %s", line)
		}
		switch u := f.Params.Update; {
		case u.SessionUpdate == "subagent_spawned" && f.Params.SessionID == "s1":
			spawned++
			child = u.SubagentSessionID
		case u.SessionUpdate == "subagent_state_update" && f.Params.SessionID == "s1" && u.SubagentSessionID == child && u.State == "completed":
			ended++
		case u.SessionUpdate == "subagent_update" || strings.HasPrefix(u.SessionUpdate, "session_message"):
			t.Errorf("a standard session shape reached AIR: %s", line)
		case u.ToolCallID == "toolu_2":
			if f.Params.SessionID != child || child == "" {
				t.Errorf("the subagent's tool call is not on its child %q: %s", child, line)
			}
			onChild++
		}
	}
	if spawned != 1 || ended != 1 || onChild != 1 {
		t.Fatalf("%d spawns, %d ends, %d child frames on the child, want one each:\n%s", spawned, ended, onChild, got)
	}
}

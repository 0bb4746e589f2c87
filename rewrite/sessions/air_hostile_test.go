package sessions_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite/rewritetest"
	"github.com/acp-normalize/acp-normalize/route"
)

// Attacks on J1 from a hostile agent: what each case pins is in its name.

// TestJ1InitializeAnswerHostile: whatever the agent put in its initialize
// answer, an AIR client gets the answer (never lost, still JSON, nothing
// logged at error), with nativeSubagentSessions merged in where the
// agent's value lets it be merged, read as a JSON parser reads it (the
// last of duplicate members wins), else the agent's value as it sent it.
func TestJ1InitializeAnswerHostile(t *testing.T) {
	const native = `{"version":1,"capabilities":["nativeSubagentSessions"]}`
	tests := []struct {
		name, result string
		want         string // result._meta.jetbrains.air as the client's parser reads it; "" for none
	}{
		{"result null", `null`, ""},
		{"result an array", `[]`, ""},
		{"result a string", `"ok"`, ""},
		{"_meta an array", `{"protocolVersion":1,"_meta":[]}`, ""},
		{"_meta a string", `{"protocolVersion":1,"_meta":"x"}`, ""},
		{"jetbrains a number", `{"protocolVersion":1,"_meta":{"jetbrains":7}}`, ""},
		{"air an array", `{"protocolVersion":1,"_meta":{"jetbrains":{"air":["nativeSubagentSessions"]}}}`, `["nativeSubagentSessions"]`},
		{"capabilities an object", `{"protocolVersion":1,"_meta":{"jetbrains":{"air":{"version":1,"capabilities":{"nativeSubagentSessions":true}}}}}`, `{"version":1,"capabilities":{"nativeSubagentSessions":true}}`},
		{"capabilities of other types", `{"protocolVersion":1,"_meta":{"jetbrains":{"air":{"version":1,"capabilities":[1,null,{"n":"nativeSubagentSessions"},["nativeSubagentSessions"]]}}}}`,
			`{"version":1,"capabilities":[1,null,{"n":"nativeSubagentSessions"},["nativeSubagentSessions"],"nativeSubagentSessions"]}`},
		{"capabilities with the name twice", `{"protocolVersion":1,"_meta":{"jetbrains":{"air":{"version":1,"capabilities":["nativeSubagentSessions","nativeSubagentSessions"]}}}}`,
			`{"version":1,"capabilities":["nativeSubagentSessions","nativeSubagentSessions"]}`},
		{"capabilities blank inside", `{"protocolVersion":1,"_meta":{"jetbrains":{"air":{"version":1,"capabilities":[ ]}}}}`, native},
		{"version not a number kept", `{"protocolVersion":1,"_meta":{"jetbrains":{"air":{"version":"2","capabilities":[]}}}}`, `{"version":"2","capabilities":["nativeSubagentSessions"]}`},
		{"air twice, the last read", `{"protocolVersion":1,"_meta":{"jetbrains":{"air":{"version":1,"capabilities":["nativeSubagentSessions"]},"air":{"version":2}}}}`,
			`{"version":2,"capabilities":["nativeSubagentSessions"]}`},
		{"_meta twice, the last read", `{"protocolVersion":1,"_meta":{"jetbrains":{"air":{"version":1}}},"_meta":{"other":1}}`, native},
		{"spaced", `{ "protocolVersion" : 1 , "_meta" : { "jetbrains" : { "air" : { "version" : 1 , "capabilities" : [ "sessionFailure" ] } } } }`,
			`{"version":1,"capabilities":["sessionFailure","nativeSubagentSessions"]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logs := rewritetest.NewLogRecorder()
			r := newRouter(t, logs)
			r.Handle(pipe.Client, []byte(airNativeInit), nil)
			answer := `{"jsonrpc":"2.0","id":0,"result":` + tt.result + `}`
			outs := r.Handle(pipe.Agent, []byte(answer), nil)
			if len(outs) != 1 || outs[0].To != pipe.Client || !json.Valid(outs[0].Frame) {
				t.Fatalf("the initialize answer did not reach the client as one JSON frame: %v", outs)
			}
			var got struct {
				Result struct {
					Meta struct {
						JetBrains struct {
							Air json.RawMessage `json:"air"`
						} `json:"jetbrains"`
					} `json:"_meta"`
				} `json:"result"`
			}
			_ = json.Unmarshal(outs[0].Frame, &got) // a result that is no object reads as none
			air := string(got.Result.Meta.JetBrains.Air)
			if air != "" {
				var b bytes.Buffer
				if err := json.Compact(&b, got.Result.Meta.JetBrains.Air); err != nil {
					t.Fatal(err)
				}
				air = b.String()
			}
			if air != tt.want {
				t.Errorf("result._meta.jetbrains.air reads %s, want %s\n%s", air, tt.want, outs[0].Frame)
			}
			if recs := logs.Find(slog.LevelError, ""); len(recs) > 0 {
				t.Errorf("error logged: %s", recs[0].Message)
			}
		})
	}
}

// TestJ1NoDraftOutsideAIR: whatever the agent sends (drafts, standard
// shapes, on the client's sessions, children or unknown ones), the draft
// kinds reach only AIR with native child sessions, and the standard
// shapes never reach it (J1, P3).
func TestJ1NoDraftOutsideAIR(t *testing.T) {
	const airMarkerInit = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"_meta":{"jetbrains":{"air":{"version":1,"capabilities":["diffPatch"]}}}}}}`
	const airAndOptIn = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"subagents":{},"_meta":{"subagents":true,"jetbrains":{"air":{"version":1,"capabilities":["nativeSubagentSessions"]}}}}}}`
	upd := func(sid, u string) string {
		return `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"` + sid + `","update":` + u + `}}`
	}
	stream := []string{
		upd("s1", `{"sessionUpdate":"subagent_spawned","subagentSessionId":"c1","name":"A","task":"a","capabilities":{"cancel":true}}`),
		upd("s1", `{"sessionUpdate":"subagent_spawned","subagentSessionId":"s1","name":"self","task":"x","capabilities":{}}`),
		upd("s1", `{"sessionUpdate":"subagent_spawned","subagentSessionId":"c1","name":"again","task":"a","capabilities":{}}`),
		upd("c1", `{"sessionUpdate":"subagent_spawned","subagentSessionId":"c2","name":"nested","task":"b","capabilities":{}}`),
		upd("s1", `{"sessionUpdate":"subagent_update","sessionId":"n1","title":"N","state":{"state":"running"},"capabilities":{"cancel":{}}}`),
		upd("s1", `{"sessionUpdate":"subagent_update","sessionId":"s1","state":{"state":"idle"}}`),
		upd("s1", `{"sessionUpdate":"subagent_update","sessionId":"unknown","state":{"state":"idle","stopReason":"end_turn"}}`),
		upd("n1", `{"sessionUpdate":"session_message","messageId":"m","senderSessionId":"n1","recipientSessionId":"s1","content":[{"type":"text","text":"report"}]}`),
		upd("s1", `{"sessionUpdate":"session_message","messageId":"m","senderSessionId":"n1","recipientSessionId":"s1","content":[{"type":"text","text":"report"}]}`),
		upd("s1", `{"sessionUpdate":"session_message_chunk","messageId":"m","senderSessionId":"s1","recipientSessionId":"n1","content":{"type":"text","text":"go"}}`),
		upd("x9", `{"sessionUpdate":"session_message","messageId":"m","senderSessionId":"x9","recipientSessionId":"x8","content":[]}`),
		upd("s1", `{"sessionUpdate":"tool_call","toolCallId":"t9","title":"t","status":"completed","content":[{"type":"session","sessionId":"n1"}]}`),
		upd("s1", `{"sessionUpdate":"tool_call_update","toolCallId":"t9","content":[{"type":"text","text":"kept"},{"type":"session","sessionId":"zz"}]}`),
		launchCall,
		upd("s1", `{"sessionUpdate":"tool_call_update","toolCallId":"toolu_1","status":"completed","_meta":{"claudeCode":{"toolName":"Agent"}}}`),
		upd("c1", `{"sessionUpdate":"subagent_state_update","state":"completed"}`),
		upd("s1", `{"sessionUpdate":"subagent_state_update","subagentSessionId":"c2","state":"failed"}`),
		upd("s1", `{"sessionUpdate":"subagent_state_update","subagentSessionId":"nope","state":"failed"}`),
		upd("s1", `{"sessionUpdate":"subagent_state_update","subagentSessionId":"c1","state":"bogus"}`),
		upd("s1", `{"sessionUpdate":"subagent_update","sessionId":"n1","state":{"state":"idle","stopReason":"end_turn"}}`),
	}
	standard := [][]byte{[]byte(`"subagent_update"`), []byte(`"session_message"`), []byte(`"session_message_chunk"`), []byte(`"type":"session"`)}
	drafts := [][]byte{[]byte(`"subagent_spawned"`), []byte(`"subagent_state_update"`)}
	for _, tt := range []struct {
		name, init     string
		drafts, stdOut bool
	}{
		{"plain", plainInit, false, false},
		{"opted in", optedInInit, false, true},
		{"AIR without native sessions", airMarkerInit, false, false},
		{"AIR native", airNativeInit, true, false},
		{"AIR native and the standard opt-in", airAndOptIn, true, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			logs := rewritetest.NewLogRecorder()
			r := newRouter(t, logs)
			handshake(t, r, tt.init, "s1")
			var gotDraft, gotStd bool
			for _, in := range stream {
				for _, o := range r.Handle(pipe.Agent, []byte(in), nil) {
					if o.To != pipe.Client {
						continue
					}
					for _, d := range drafts {
						gotDraft = gotDraft || bytes.Contains(o.Frame, d)
					}
					for _, s := range standard {
						if bytes.Contains(o.Frame, s) {
							gotStd = true
							if !tt.stdOut {
								t.Errorf("a standard shape reached the client: %s", o.Frame)
							}
						}
					}
				}
			}
			if gotDraft != tt.drafts {
				t.Errorf("draft kinds reached the client: %v, want %v", gotDraft, tt.drafts)
			}
			if tt.stdOut && !gotStd {
				t.Error("the opted-in client got no standard shape")
			}
			if recs := logs.Find(slog.LevelError, ""); len(recs) > 0 {
				t.Errorf("error logged: %s", recs[0].Message)
			}
		})
	}
}

// TestJ1EveryMessageToTheChild: each session_message the agent sends
// between a parent and its own child (Claude's: one copy on each
// session) reaches AIR once, on the child: every one the parent sends
// (the prompt, and what it says to the subagent later) as the child's
// user message, every report as its agent message; none is lost, none
// doubled (J1).
func TestJ1EveryMessageToTheChild(t *testing.T) {
	msg := func(on, id, from, to, text string) string {
		return `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"` + on + `","update":{"sessionUpdate":"session_message","messageId":"` + id +
			`","senderSessionId":"` + from + `","recipientSessionId":"` + to + `","content":[{"type":"text","text":"` + text + `"}]}}}`
	}
	both := func(id, from, to, text string) []string {
		return []string{msg(from, id, from, to, text), msg(to, id, from, to, text)}
	}
	const announce = `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"subagent_update","sessionId":"c1","title":"Scan","state":{"state":"running"}}}}`
	const draft = `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"subagent_spawned","subagentSessionId":"c1","name":"Scan","task":"scan","prompt":"the prompt","capabilities":{}}}}`
	tests := []struct {
		name   string
		frames []string
		want   []string // kind:session:text of the chunks AIR gets, in order
	}{
		{"prompt, follow-up, report", concat(
			both("m1", "s1", "c1", "the prompt"),
			both("m2", "s1", "c1", "and one more thing"),
			both("m3", "c1", "s1", "the report"),
		), []string{"user_message_chunk:c1:the prompt", "user_message_chunk:c1:and one more thing", "agent_message_chunk:c1:the report"}},
		{"copies in the other order", concat(
			[]string{msg("c1", "m1", "s1", "c1", "the prompt"), msg("s1", "m1", "s1", "c1", "the prompt")},
			[]string{msg("c1", "m2", "s1", "c1", "again"), msg("s1", "m2", "s1", "c1", "again")},
		), []string{"user_message_chunk:c1:the prompt", "user_message_chunk:c1:again"}},
		{"a message between two sessions that are no parent and child", both("m1", "s1", "x9", "elsewhere"), nil},
		{"a spawn that carried the prompt", concat(
			[]string{draft},
			both("m1", "s1", "c1", "the prompt"),
			both("m2", "s1", "c1", "and one more thing"),
		), []string{"subagent_spawned:s1:", "user_message_chunk:c1:and one more thing"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRouter(t, rewritetest.NewLogRecorder())
			handshake(t, r, airNativeInit, "s1")
			if !strings.Contains(tt.frames[0], "subagent_spawned") {
				r.Handle(pipe.Agent, []byte(announce), nil)
			}
			var got []string
			for _, f := range tt.frames {
				for _, o := range r.Handle(pipe.Agent, []byte(f), nil) {
					var m struct {
						Params struct {
							SessionID string `json:"sessionId"`
							Update    struct {
								SessionUpdate string `json:"sessionUpdate"`
								Content       struct {
									Text string `json:"text"`
								} `json:"content"`
							} `json:"update"`
						} `json:"params"`
					}
					if err := json.Unmarshal(o.Frame, &m); err != nil {
						t.Fatal(err)
					}
					got = append(got, m.Params.Update.SessionUpdate+":"+m.Params.SessionID+":"+m.Params.Update.Content.Text)
				}
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("AIR got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func concat(lists ...[]string) []string {
	var all []string
	for _, l := range lists {
		all = append(all, l...)
	}
	return all
}

// TestJ1OneSpawnOneEnd: however often and wherever the agent repeats a
// child's announcement or end (standard or draft, on the parent or on
// the child, before or after the spawn), AIR gets at most one
// subagent_spawned and one subagent_state_update per child, the spawn
// first (J1).
func TestJ1OneSpawnOneEnd(t *testing.T) {
	upd := func(sid, u string) string {
		return `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"` + sid + `","update":` + u + `}}`
	}
	running := upd("s1", `{"sessionUpdate":"subagent_update","sessionId":"c1","title":"Scan","state":{"state":"running"}}`)
	idle := upd("s1", `{"sessionUpdate":"subagent_update","sessionId":"c1","state":{"state":"idle","stopReason":"end_turn"}}`)
	spawn := upd("s1", `{"sessionUpdate":"subagent_spawned","subagentSessionId":"c1","name":"Scan","task":"scan","capabilities":{}}`)
	endOnChild := upd("c1", `{"sessionUpdate":"subagent_state_update","state":"completed"}`)
	endOnParent := upd("s1", `{"sessionUpdate":"subagent_state_update","subagentSessionId":"c1","state":"completed"}`)
	tests := []struct {
		name         string
		frames       []string
		spawns, ends int
	}{
		{"standard, announced twice, ended twice", []string{running, running, idle, idle}, 1, 1},
		{"standard, ended before any running", []string{idle, idle}, 1, 1},
		{"standard, running after the end", []string{running, idle, running, idle}, 1, 1},
		{"draft, ended on the child and on the parent", []string{spawn, endOnChild, endOnParent}, 1, 1},
		{"draft, ended on the parent twice", []string{spawn, endOnParent, endOnParent}, 1, 1},
		{"draft, then a standard end", []string{spawn, idle, endOnChild}, 1, 1},
		{"standard, then a draft end", []string{running, endOnChild, idle}, 1, 1},
		{"an end of a child never announced", []string{endOnParent, endOnChild}, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRouter(t, rewritetest.NewLogRecorder())
			handshake(t, r, airNativeInit, "s1")
			spawns, ends := 0, 0
			for _, f := range tt.frames {
				for _, o := range r.Handle(pipe.Agent, []byte(f), nil) {
					switch {
					case bytes.Contains(o.Frame, []byte(`"subagent_spawned"`)):
						spawns++
					case bytes.Contains(o.Frame, []byte(`"subagent_state_update"`)):
						if spawns == 0 {
							t.Errorf("an end before the spawn: %s", o.Frame)
						}
						ends++
					}
				}
			}
			if spawns != tt.spawns || ends != tt.ends {
				t.Errorf("%d spawns and %d ends, want %d and %d", spawns, ends, tt.spawns, tt.ends)
			}
		})
	}
}

// TestJ1ChildTheClientNamesStaysAChild: a child the client was told of
// stays a child when the client names it (AIR's user cancels the
// subagent, or sends it a prompt): its end still reaches the client, as
// AIR's one subagent_state_update or the standard state (J1, S3, S7).
func TestJ1ChildTheClientNamesStaysAChild(t *testing.T) {
	const announce = `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"subagent_update","sessionId":"c1","title":"Scan","state":{"state":"running"},"capabilities":{"cancel":{}}}}}`
	const end = `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"subagent_update","sessionId":"c1","state":{"state":"idle","stopReason":"cancelled"}}}}`
	for _, tt := range []struct{ name, init, named, want string }{
		{"AIR cancels it", airNativeInit, `{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"c1"}}`, `"subagent_state_update","subagentSessionId":"c1","state":"cancelled"`},
		{"AIR prompts it", airNativeInit, `{"jsonrpc":"2.0","id":5,"method":"session/prompt","params":{"sessionId":"c1","prompt":[]}}`, `"subagent_state_update","subagentSessionId":"c1","state":"cancelled"`},
		{"an opted-in client cancels it", optedInInit, `{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"c1"}}`, `"subagent_update","sessionId":"c1","state":{"state":"idle"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := newRouter(t, rewritetest.NewLogRecorder())
			handshake(t, r, tt.init, "s1")
			r.Handle(pipe.Agent, []byte(announce), nil)
			if outs := r.Handle(pipe.Client, []byte(tt.named), nil); len(outs) != 1 || outs[0].To != pipe.Agent {
				t.Fatalf("the client's frame on the agent's child did not reach the agent: %v", outs)
			}
			if outs := r.Handle(pipe.Agent, []byte(end), nil); !reached(outs, pipe.Client, tt.want) {
				t.Errorf("the child's end did not reach the client as %s: %v", tt.want, outs)
			}
		})
	}
}

// TestJ1SpawnAtTurnEndNamed: a foreground child the turn's answer ends
// before AIR got its spawn (the call never worked, no prompt known) is
// spawned with what its launch call says (its title), then ended
// disconnected: never an anonymous "Subagent" when the call has a name
// (J1, S4).
func TestJ1SpawnAtTurnEndNamed(t *testing.T) {
	r := newRouter(t, rewritetest.NewLogRecorder())
	handshake(t, r, airNativeInit, "s1")
	r.Handle(pipe.Client, []byte(`{"jsonrpc":"2.0","id":9,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}`), nil)
	call := strings.Replace(launchCall, `"rawInput":{"description":"Copy","prompt":"Copy it"}`, `"rawInput":{"description":"Copy the tree"}`, 1)
	for _, o := range r.Handle(pipe.Agent, []byte(call), nil) {
		if bytes.Contains(o.Frame, []byte(`"subagent_spawned"`)) {
			t.Fatalf("spawned before the call said anything but its name: %s", o.Frame)
		}
	}
	outs := r.Handle(pipe.Agent, []byte(`{"jsonrpc":"2.0","id":9,"result":{"stopReason":"end_turn"}}`), nil)
	var spawn, end []byte
	for _, o := range outs {
		switch {
		case bytes.Contains(o.Frame, []byte(`"subagent_spawned"`)):
			spawn = o.Frame
		case bytes.Contains(o.Frame, []byte(`"subagent_state_update"`)):
			end = o.Frame
		}
	}
	if !bytes.Contains(spawn, []byte(`"name":"Copy the tree"`)) {
		t.Errorf("the spawn at the turn's end is not named by its call: %s", spawn)
	}
	if !bytes.Contains(end, []byte(`"state":"disconnected"`)) {
		t.Errorf("no disconnected end: %v", outs)
	}
}

// TestJ1SpawnFromAnyAnnouncement: a standard subagent_update with
// members of unexpected types (the agent's bug) still gives AIR its
// child's spawn, so the child's frames and requests that follow name a
// session AIR knows; what cannot be read is left out of the draft (J1).
func TestJ1SpawnFromAnyAnnouncement(t *testing.T) {
	for _, tt := range []struct{ name, update, want string }{
		{"title a number", `{"sessionUpdate":"subagent_update","sessionId":"c1","title":5,"description":"Scan it","state":{"state":"running"}}`, `"name":"Scan it"`},
		{"description an object", `{"sessionUpdate":"subagent_update","sessionId":"c1","title":"Scan","description":{},"state":{"state":"running"}}`, `"name":"Scan"`},
		{"state a string", `{"sessionUpdate":"subagent_update","sessionId":"c1","title":"Scan","state":"running"}`, `"name":"Scan"`},
		{"state's stopReason a number", `{"sessionUpdate":"subagent_update","sessionId":"c1","title":"Scan","state":{"state":"idle","stopReason":1}}`, `"name":"Scan"`},
		{"capabilities an array", `{"sessionUpdate":"subagent_update","sessionId":"c1","title":"Scan","capabilities":[]}`, `"name":"Scan"`},
		{"title null", `{"sessionUpdate":"subagent_update","sessionId":"c1","title":null}`, `"name":"Subagent"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := newRouter(t, rewritetest.NewLogRecorder())
			handshake(t, r, airNativeInit, "s1")
			frame := `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":` + tt.update + `}}`
			if outs := r.Handle(pipe.Agent, []byte(frame), nil); !reached(outs, pipe.Client, `"subagent_spawned","subagentSessionId":"c1"`) || !reached(outs, pipe.Client, tt.want) {
				t.Errorf("no spawn of c1 with %s: %v", tt.want, outs)
			}
		})
	}
}

// TestJ1ReopenedThreadSpawnsAgain: when AIR loads a session again on the
// same connection (a thread reopened while the agent runs on), the
// agent's replay announces each child anew, and AIR gets its spawn and
// end again, as it would on a fresh connection: the replayed child
// frames that follow name sessions its rebuilt view knows (J1).
func TestJ1ReopenedThreadSpawnsAgain(t *testing.T) {
	running := `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"subagent_update","sessionId":"c1","title":"Scan","state":{"state":"running"}}}}`
	idle := `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"subagent_update","sessionId":"c1","state":{"state":"idle","stopReason":"end_turn"}}}}`
	count := func(r *route.Router, frames ...string) (spawns, ends int) {
		for _, f := range frames {
			for _, o := range r.Handle(pipe.Agent, []byte(f), nil) {
				spawns += bytes.Count(o.Frame, []byte(`"subagent_spawned"`))
				ends += bytes.Count(o.Frame, []byte(`"subagent_state_update"`))
			}
		}
		return spawns, ends
	}
	r := newRouter(t, rewritetest.NewLogRecorder())
	handshake(t, r, airNativeInit, "s1")
	if s, e := count(r, running, idle); s != 1 || e != 1 {
		t.Fatalf("live: %d spawns, %d ends", s, e)
	}
	r.Handle(pipe.Client, []byte(`{"jsonrpc":"2.0","id":5,"method":"session/load","params":{"sessionId":"s1","cwd":"/w","mcpServers":[]}}`), nil)
	if s, e := count(r, running, idle); s != 1 || e != 1 {
		t.Errorf("replayed after a load: %d spawns, %d ends, want 1 and 1", s, e)
	}
	r.Handle(pipe.Agent, []byte(`{"jsonrpc":"2.0","id":5,"result":{}}`), nil)
	if s, e := count(r, running, idle); s != 0 || e != 0 {
		t.Errorf("repeated live after the replay: %d spawns, %d ends, want none", s, e)
	}
}

package check

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/acp-normalize/acp-normalize/internal/acpschema"
	"github.com/acp-normalize/acp-normalize/internal/terminal"
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/rewrite/cursor"
	vendormethods "github.com/acp-normalize/acp-normalize/rewrite/methods"
	"github.com/acp-normalize/acp-normalize/rewrite/rewritetest"
	"github.com/acp-normalize/acp-normalize/route"
)

// checkCapture runs Check over a capture (one record per line) replayed
// through mods and returns its JSON report.
func checkCapture(t *testing.T, schemas map[int]*acpschema.Schema, capture string, mods ...rewrite.Module) checkReport {
	t.Helper()
	var buf bytes.Buffer
	c := New(&buf, true, cursor.Module()) // the module whose rules the findings cite
	c.schemas = schemas                   // loaded once for the test: loading is the slow part
	render(t, c, mods, writeCapture(t, capture))
	var rep checkReport
	if err := json.Unmarshal(buf.Bytes(), &rep); err != nil {
		t.Fatalf("report %s: %v", buf.String(), err)
	}
	if c.Problems() != rep.Problems || rep.Problems != len(rep.Findings) {
		t.Errorf("Problems() %d, report %d, %d findings", c.Problems(), rep.Problems, len(rep.Findings))
	}
	return rep
}

// Frames of a small clean v1 session.
const (
	ckInit       = `{"from":"client","frame":{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{},"clientInfo":{"name":"zed","version":"1"}}}}`
	ckInitSub    = `{"from":"client","frame":{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"subagents":{}}}}}`
	ckInitResult = `{"from":"agent","frame":{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{},"agentInfo":{"name":"fake","version":"2"}}}}`
	ckNew        = `{"from":"client","frame":{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/w","mcpServers":[]}}}`
	ckNewResult  = `{"from":"agent","frame":{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s"}}}`
	ckPrompt     = `{"from":"client","frame":{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s","prompt":[{"type":"text","text":"hi"}]}}}`
	ckChunk      = `{"from":"agent","frame":{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"ok"}}}}}`
	ckTool       = `{"from":"agent","frame":{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"t","title":"Read","kind":"read","status":"pending"}}}}`
	ckDone       = `{"from":"agent","frame":{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}}`
)

func lines(ls ...string) string { return strings.Join(ls, "\n") + "\n" }

// describe renders a finding for comparison.
func describe(f *finding) string {
	return f.Side + ">" + f.To + " " + f.Method + " " + f.Update + " " + f.Kind + " " + f.Path + " [" + f.Rule + "] x" +
		strconv.Itoa(f.Count) + " line " + strconv.Itoa(f.FirstLine) + " reached " + strconv.Itoa(f.Reached) + ": " + f.Message
}

// TestCheck: each kind of problem check reports, attributed to the side
// that sent the frame, and a clean session with none.
func TestCheck(t *testing.T) {
	clean := []string{ckInit, ckInitResult, ckNew, ckNewResult, ckPrompt, ckChunk, ckTool, ckDone}
	tests := []struct {
		name    string
		capture string
		mods    []rewrite.Module
		want    []string // describe() of each finding, in report order
	}{
		{"clean_session", lines(clean...), nil, nil},
		{"schema_violation_by_the_agent",
			lines(ckInit, ckInitResult, ckNew, ckNewResult, ckTool, `{"from":"agent","frame":{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"t","status":"done"}}}}`),
			nil, []string{`agent>client session/update tool_call_update notification /params/update/status [] x1 line 6 reached 1: must be one of "pending", "in_progress", "completed", "failed", not "done"`}},
		{"update_of_a_tool_call_never_announced",
			lines(ckInit, ckInitResult, ckNew, ckNewResult, `{"from":"agent","frame":{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"nope","status":"failed"}}}}`),
			nil, []string{`agent>client session/update tool_call_update notification /params/update/toolCallId [] x1 line 5 reached 1: an update of a tool call this session never announced`}},
		{"a_session_the_client_does_not_know",
			lines(ckInit, ckInitResult, ckNew, ckNewResult, `{"from":"agent","frame":{"jsonrpc":"2.0","id":9,"method":"session/request_permission","params":{"sessionId":"child","toolCall":{"toolCallId":"t"},"options":[]}}}`),
			nil, []string{`agent>client session/request_permission  request /params/sessionId [] x1 line 5 reached 1: a session the client never created and was not told about`}},
		{"a_problem_the_proxy_repairs_is_not_reached",
			lines(ckInit, ckInitResult, `{"from":"agent","frame":{"jsonrpc":"2.0","id":7,"method":"craft/x","params":{}}}`),
			[]rewrite.Module{vendormethods.Module()}, []string{`agent>client craft/x  request  [V7] x1 line 3 reached 0: not a method of the ACP schema`}},
		{"V7_method_outside_ACP",
			lines(ckInit, ckInitResult, `{"from":"agent","frame":{"jsonrpc":"2.0","id":7,"method":"craft/drainMidTurnQueue","params":{}}}`, `{"from":"agent","frame":{"jsonrpc":"2.0","method":"craft/note","params":{}}}`),
			nil, []string{
				`agent>client craft/drainMidTurnQueue  request  [V7] x1 line 3 reached 1: not a method of the ACP schema`,
				`agent>client craft/note  notification  [V7] x1 line 4 reached 1: not a method of the ACP schema`}},
		{"C1_cursor_task", lines(ckInit, ckInitResult, `{"from":"agent","frame":{"jsonrpc":"2.0","id":0,"method":"cursor/task","params":{"toolCallId":"t"}}}`),
			nil, []string{`agent>client cursor/task  request  [C1] x1 line 3 reached 1: not a method of the ACP schema`}},
		{"extension_methods_are_fine", lines(ckInit, ckInitResult, `{"from":"agent","frame":{"jsonrpc":"2.0","method":"_vendor/x","params":{}}}`), nil, nil},
		{"S6_draft_dialect",
			lines(ckInit, ckInitResult, ckNew, ckNewResult, `{"from":"agent","frame":{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"subagent_spawned","subagentSessionId":"c","name":"n","task":"t"}}}}`),
			nil, []string{`agent>client session/update subagent_spawned notification /params/update/sessionUpdate [S6] x1 line 5 reached 1: the draft subagent dialect`}},
		{"S0_subagent_update_without_opt_in",
			lines(ckInit, ckInitResult, ckNew, ckNewResult, `{"from":"agent","frame":{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"subagent_update","sessionId":"c","title":"x","state":{"state":"running"}}}}}`),
			nil, []string{`agent>client session/update subagent_update notification /params/update/sessionUpdate [S0] x1 line 5 reached 1: a subagent session shape sent to a client that did not declare clientCapabilities.subagents`}},
		{"S0_subagent_update_with_opt_in_is_fine",
			lines(ckInitSub, ckInitResult, ckNew, ckNewResult, `{"from":"agent","frame":{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"subagent_update","sessionId":"c","title":"x","state":{"state":"running"}}}}}`),
			nil, nil},
		{"request_id_of_an_open_request",
			lines(ckInit, ckInitResult, ckNew, `{"from":"client","frame":{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/v","mcpServers":[]}}}`),
			nil, []string{`client>agent session/new  request /id [] x1 line 4 reached 1: the id of a request of this side that is still open`}},
		{"ids_compared_by_value", lines(ckInit, ckInitResult, `{"from":"client","frame":{"jsonrpc":"2.0","id":"a","method":"session/new","params":{"cwd":"/w","mcpServers":[]}}}`,
			`{"from":"agent","frame":{"jsonrpc":"2.0","id":"\u0061","result":{"sessionId":"s"}}}`), nil, nil},
		{"answer_to_no_request",
			lines(ckInit, ckInitResult, `{"from":"agent","frame":{"jsonrpc":"2.0","id":77,"result":{}}}`),
			nil, []string{`agent>client   response /id [] x1 line 3 reached 1: answers no open request of the other side`}},
		{"answer_to_a_request_of_the_recorded_proxy_C12", lines(ckInit, ckInitResult, `{"from":"client","frame":{"jsonrpc":"2.0","id":"acp-normalize:1","result":{}}}`), nil, nil},
		{"answer_to_a_request_of_the_recorded_proxy_spelled_with_an_escape_C12", lines(ckInit, ckInitResult, `{"from":"client","frame":{"jsonrpc":"2.0","id":"acp\u002dnormalize:1","result":{}}}`), nil, nil},
		{"id_not_an_integer", lines(`{"from":"client","frame":{"jsonrpc":"2.0","id":1.5,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}}`),
			nil, []string{`client>agent initialize  request /id [] x1 line 1 reached 1: a request id must be a string, an integer or null, not 1.5`}},
		{"S7_the_clients_own_session_announced_as_a_child", lines(ckInitSub, ckInitResult, ckNew, ckNewResult,
			`{"from":"agent","frame":{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"subagent_update","sessionId":"s","title":"x","state":{"state":"running"}}}}}`,
			`{"from":"client","frame":{"jsonrpc":"2.0","id":5,"method":"session/load","params":{"sessionId":"l","cwd":"/w","mcpServers":[]}}}`,
			`{"from":"agent","frame":{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"subagent_update","sessionId":"l","title":"x","state":{"state":"running"}}}}}`,
			`{"from":"agent","frame":{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"subagent_update","sessionId":"c","title":"x","state":{"state":"running"}}}}}`),
			nil, []string{`agent>client session/update subagent_update notification /params/update/sessionId [S7] x2 line 5 reached 2: the client's own session announced as a child`}},
		{"a_frame_that_is_not_UTF-8", lines(ckInit, ckInitResult, ckNew, ckNewResult,
			`{"from":"agent","frame":{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"caf`+"\xc3\x28 \xff"+`"}}}}}`),
			nil, []string{`agent>client session/update agent_message_chunk notification  [] x1 line 5 reached 1: not valid UTF-8`}},
		{"F2_not_JSON", lines(ckInit, ckInitResult, `{"from":"agent","text":"Using worktree: /x"}`),
			nil, []string{`agent>client   line  [F2] x1 line 3 reached 0: a line that is not JSON on the protocol stream`}},
		{"v2_upserts_and_subagents_without_capability_are_fine",
			lines(`{"from":"client","frame":{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":2,"info":{"name":"c","version":"1"},"capabilities":{}}}}`,
				`{"from":"agent","frame":{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":2,"info":{"name":"a","version":"2"},"capabilities":{}}}}`,
				`{"from":"client","frame":{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/w","mcpServers":[]}}}`,
				`{"from":"agent","frame":{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s"}}}`,
				`{"from":"agent","frame":{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"t","title":"Read","status":"in_progress"}}}}`),
			nil, nil},
		{"P3_a_bad_frame_the_proxy_writes_is_the_proxys",
			lines(ckInit, ckInitResult, ckNew, ckNewResult, `{"from":"agent","frame":{"jsonrpc":"2.0","method":"_x/bad","params":{}}}`),
			[]rewrite.Module{badFrameModule()}, []string{
				`acp-normalize>client session/update nonsense notification /params/update/sessionUpdate [] x1 line 5 reached 1: must be one of "user_message_chunk", `}},
	}
	schemas := map[int]*acpschema.Schema{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := checkCapture(t, schemas, tt.capture, tt.mods...)
			var got []string
			for _, f := range rep.Findings {
				got = append(got, describe(f))
			}
			if len(got) != len(tt.want) {
				t.Fatalf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
			for i := range got {
				if !strings.HasPrefix(got[i], tt.want[i]) {
					t.Errorf("finding %d:\n%s\nwant it to start\n%s", i, got[i], tt.want[i])
				}
			}
		})
	}
}

// TestCheckIDsAsTheRouter: check pairs an answer with its request by the
// id's value (F6), as the router does (pipe.IDKey): an answer that spells
// the request's id differently answers it, one with another value does
// not.
func TestCheckIDsAsTheRouter(t *testing.T) {
	tests := []struct {
		name, request, answer string
		answers               bool
	}{
		{"string with an escape", `"a"`, `"\u0061"`, true},
		{"request id with an escape", `"\u0062"`, `"b"`, true},
		{"integer with an exponent", `100`, `1E2`, true},
		{"integer with a fraction", `7`, `7.0`, true},
		{"zero and minus zero", `0`, `-0`, true},
		{"same bytes", `"x"`, `"x"`, true},
		{"another integer", `100`, `101`, false},
		{"the string of the digits", `100`, `"100"`, false},
		{"another string", `"a"`, `"b"`, false},
	}
	schemas := map[int]*acpschema.Schema{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := checkCapture(t, schemas, lines(ckInit, ckInitResult,
				`{"from":"client","frame":{"jsonrpc":"2.0","id":`+tt.request+`,"method":"session/new","params":{"cwd":"/w","mcpServers":[]}}}`,
				`{"from":"agent","frame":{"jsonrpc":"2.0","id":`+tt.answer+`,"result":{"sessionId":"s"}}}`))
			unanswered := false
			for _, f := range rep.Findings {
				switch {
				case strings.HasPrefix(f.Message, "answers no open request"):
					unanswered = true
				case strings.HasPrefix(f.Message, "a request id must be a string, an integer or null"):
					// 1E2 and 7.0 are integers a receiver may not take
					// as one: a finding of its own, not of pairing.
				default:
					t.Errorf("finding: %s", describe(f))
				}
			}
			if unanswered == tt.answers {
				t.Fatalf("answer %s to request %s: reported as answering no request = %v", tt.answer, tt.request, unanswered)
			}
		})
	}
}

// badFrameModule replaces every _x/bad notification with a session/update
// of no ACP kind.
func badFrameModule() rewrite.Module {
	return rewritetest.FuncModule("bad", "test: writes a bad frame", []string{`"_x/bad"`}, func(f *rewrite.Frame) (rewrite.Verdict, error) {
		var v rewrite.Verdict
		if f.Method() == "_x/bad" {
			v.Replace([]byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"nonsense"}}}`))
		}
		return v, nil
	})
}

// TestCheckVersion: the schema is the negotiated version's (the
// initialize result), and the report says where the version came from.
func TestCheckVersion(t *testing.T) {
	schemas := map[int]*acpschema.Schema{}
	v2 := lines(`{"from":"client","frame":{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":2,"clientCapabilities":{}}}}`,
		`{"from":"agent","frame":{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":2,"agentCapabilities":{}}}}`)
	for _, tc := range []struct {
		name, capture, from string
		version             int
	}{
		{"v1", lines(ckInit, ckInitResult), "the initialize result", 1},
		{"v2", v2, "the initialize result", 2},
		{"no_initialize", lines(ckChunk), "assumed: no initialize", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := checkCapture(t, schemas, tc.capture)
			if rep.ProtocolVersion != tc.version || rep.VersionFrom != tc.from {
				t.Errorf("version %d from %q, want %d from %q", rep.ProtocolVersion, rep.VersionFrom, tc.version, tc.from)
			}
		})
	}
}

// TestCheckText: the text report names the sides, marks each problem,
// says what the proxy did with the frames, and keeps frame text safe for
// a terminal.
func TestCheckText(t *testing.T) {
	capture := lines(ckInit, ckInitResult, `{"from":"agent","frame":{"jsonrpc":"2.0","method":"craft/note","params":{"x":"\u001b]52;c;aGk=\u0007"}}}`)
	var buf bytes.Buffer
	c := New(&buf, false)
	render(t, c, nil, writeCapture(t, capture))
	out := buf.String()
	for _, want := range []string{
		"client zed 1, agent fake 2, ACP v1 (the initialize result)",
		"1 frame from the client, 2 from the agent, 1 written by acp-normalize",
		"agent → client: 1 problem",
		`✗ craft/note notification  not a method of the ACP schema, and not "_"-prefixed (an extension method) (rule V7)`,
		"1 frame, first at line 3; the client gets the problem",
		`\u001b]52;c;aGk=\u0007`,
		"client → agent: clean",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if r, at := firstUnsafeRune(out); at >= 0 {
		t.Errorf("rune %U reached the report", r)
	}
}

// TestLevelNames: every level reads back from its name, in order, and a
// name that is no level is an error (`check --fail-on` takes them).
func TestLevelNames(t *testing.T) {
	tests := []struct {
		name string
		want Level
		err  bool
	}{
		{"repaired", Repaired, false},
		{"broken", Broken, false},
		{"none", 0, true}, // the command's, not a level
		{"Broken", 0, true},
		{"", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseLevel(tt.name)
			if (err != nil) != tt.err || got != tt.want {
				t.Fatalf("ParseLevel(%q) = %v, %v; want %v (error %v)", tt.name, got, err, tt.want, tt.err)
			}
			if err == nil && got.String() != tt.name {
				t.Errorf("%v.String() = %q", got, got.String())
			}
		})
	}
	if Repaired >= Broken {
		t.Errorf("Repaired (%d) is not below Broken (%d)", Repaired, Broken)
	}
}

// render replays the captures through mods into the checker.
func render(t *testing.T, c *Checker, mods []rewrite.Module, names ...string) {
	t.Helper()
	for _, name := range names {
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Begin(filepath.ToSlash(name)); err != nil {
			t.Fatal(err)
		}
		err = route.Replay(f, route.RouterConfig{Modules: mods, Version: "test"}, func(s *route.Step) error {
			if s.Kind == route.StepError {
				return nil
			}
			return c.Step(s)
		})
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if err := c.End(); err != nil {
			t.Fatal(err)
		}
	}
}

// writeCapture writes a capture's text to a file of the test's own.
func writeCapture(t *testing.T, capture string) string {
	t.Helper()
	name := filepath.Join(t.TempDir(), "capture.jsonl")
	if err := os.WriteFile(name, []byte(capture), 0o600); err != nil {
		t.Fatal(err)
	}
	return name
}

// FuzzCheck replays arbitrary captures into the check (the viewer's fuzz
// seeds): it does not panic and every line of its --json report is JSON.
func FuzzCheck(f *testing.F) {
	f.Add([]byte(`{"from":"agent","frame":{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"</script><img src=x onerror=1>","update":{"sessionUpdate":"subagent_update","sessionId":"c","title":"<!--"}}}}` + "\n"))
	f.Add([]byte(`{"from":"client","frame":{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":2}}}` + "\n" + `{"from":"agent","frame":{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"x"}}}` + "\n"))
	f.Add([]byte(`{"from":"agent","text":"\u2028</style>"}` + "\n" + `{"from":"agent","stderr":"</script>"}` + "\n" + `{"event":"exit","code":1}` + "\n"))
	f.Add([]byte(`{"from":"agent","frame":{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"t","rawInput":{"_toolName":"task"},"_meta":{"acp-normalize":{"subagent":{"status":"running","durationMs":"x"}}}}}}}` + "\n"))
	schemas := map[int]*acpschema.Schema{} // loaded once: loading is the slow part
	f.Fuzz(func(t *testing.T, data []byte) {
		var report bytes.Buffer
		c := New(&report, true)
		c.schemas = schemas
		if err := c.Begin("fuzz</script>"); err != nil {
			t.Fatal(err)
		}
		mods := []rewrite.Module{rewritetest.Module()}
		err := route.Replay(bytes.NewReader(data), route.RouterConfig{Modules: mods, NonJSON: route.ForwardNonJSON}, func(s *route.Step) error {
			if s.Kind == route.StepError {
				return nil
			}
			return c.Step(s)
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.End(); err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(strings.TrimSpace(report.String()), "\n") {
			if !json.Valid([]byte(line)) {
				t.Fatalf("check report line %q", line)
			}
		}
	})
}

// firstUnsafeRune returns the first C0 (but newline), C1 or format rune
// of a report, and its offset, or -1.
func firstUnsafeRune(out string) (rune, int) {
	for i, r := range out {
		if r != '\n' && terminal.Unsafe(r) {
			return r, i
		}
	}
	return 0, -1
}

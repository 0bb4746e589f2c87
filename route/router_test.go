package route

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite"
)

// testModule exercises every kind of verdict, keyed by method name.
type testModule struct{ log *slog.Logger }

func newTestModule() rewrite.Module {
	return rewrite.Module{
		Name:     "test",
		Doc:      "exercises verdicts in router tests",
		Triggers: []string{`"test/`},
		New:      func(env rewrite.Env) rewrite.Rewriter { return &testModule{log: env.Logger} },
	}
}

func (m *testModule) Rewrite(f *rewrite.Frame) (rewrite.Verdict, error) {
	var v rewrite.Verdict
	switch f.Method() {
	case "test/replace":
		out, err := rewrite.Set(f.Raw, []byte(`"replaced"`), "params", "x")
		if err != nil {
			return v, err
		}
		v.Replace(out)
	case "test/drop":
		v.DropFrame()
	case "test/reply":
		v.DropFrame()
		res, _ := rewrite.Result(f.ID(), map[string]any{})
		v.Send(f.From, res)
	case "test/emit":
		n, _ := rewrite.Notification("test/emitted", map[string]int{"n": 1})
		v.Send(f.From.Other(), n)
		n2, _ := rewrite.Notification("test/emitted", map[string]int{"n": 2})
		v.Send(f.From.Other(), n2)
	case "test/ask":
		v.DropFrame()
		v.SendRequest(f.From.Other(), "test/question", []byte(`{"q":1}`), append([]byte(nil), f.ID()...))
	case "test/error":
		return v, rewrite.RuleErrorf("X1", "bad %s", "input")
	case "test/panic":
		panic("boom")
	}
	return v, nil
}

func (m *testModule) HandleResponse(cookie any, f *rewrite.Frame) (rewrite.Verdict, error) {
	var v rewrite.Verdict
	answer, _ := f.Lookup("result")
	res, err := rewrite.Result(cookie.([]byte), answer)
	if err != nil {
		return v, err
	}
	v.Send(pipe.Agent, res)
	return v, nil
}

func (m *testModule) Close(unanswered []any) rewrite.Verdict {
	var v rewrite.Verdict
	for _, c := range unanswered {
		res, _ := rewrite.Result(c.([]byte), []byte(`{"outcome":"cancelled"}`))
		v.Send(pipe.Agent, res)
	}
	return v
}

type step struct {
	from  pipe.Side
	frame string
	want  []string // "to op frame"
}

func fmtOut(o Out) string {
	op := o.Op
	if op == "" {
		op = "forward"
	}
	return fmt.Sprintf("%s %s %s", o.To, op, o.Frame)
}

func runSteps(t *testing.T, r *Router, steps []step) {
	t.Helper()
	for i, s := range steps {
		outs := r.Handle(s.from, []byte(s.frame), nil)
		var got []string
		for _, o := range outs {
			got = append(got, fmtOut(o))
		}
		if strings.Join(got, "\n") != strings.Join(s.want, "\n") {
			t.Fatalf("step %d (%s %s):\n got %q\nwant %q", i, s.from, s.frame, got, s.want)
		}
	}
}

func newTestRouter(t *testing.T, logs *bytes.Buffer, capture *pipe.CaptureWriter) *Router {
	t.Helper()
	var h slog.Handler = slog.DiscardHandler
	if logs != nil {
		h = slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})
	}
	r, err := NewRouter(RouterConfig{
		Modules: []rewrite.Module{newTestModule()},
		Logger:  slog.New(h),
		Version: "9.9.9",
		Capture: capture,
	})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

const (
	C = pipe.Client
	A = pipe.Agent
)

func TestRouterVerdicts(t *testing.T) {
	tests := []struct {
		name  string
		steps []step
	}{
		{"P1 untouched frames are forwarded as the same bytes", []step{
			{A, `{"jsonrpc":"2.0","method":"session/update","params":{"text":"<&> \u00e9"}}`, []string{`client forward {"jsonrpc":"2.0","method":"session/update","params":{"text":"<&> \u00e9"}}`}},
			{C, `{ "id" : -1 , "method":"x" }`, []string{`agent forward { "id" : -1 , "method":"x" }`}},
			{A, `[{"id":1,"method":"batch"}]`, []string{`client forward [{"id":1,"method":"batch"}]`}},
		}},
		{"replace", []step{
			{A, `{"method":"test/replace","params":{"x":1,"y":"<>"}}`, []string{`client replace {"method":"test/replace","params":{"x":"replaced","y":"<>"}}`}},
		}},
		{"drop", []step{
			{A, `{"method":"test/drop"}`, nil},
		}},
		{"reply goes back to the sender", []step{
			{A, `{"id":0,"method":"test/reply"}`, []string{`agent reply {"jsonrpc":"2.0","id":0,"result":{}}`}},
		}},
		{"P2 emits follow the frame in order", []step{
			{A, `{"method":"test/emit"}`, []string{
				`client forward {"method":"test/emit"}`,
				`client emit {"jsonrpc":"2.0","method":"test/emitted","params":{"n":1}}`,
				`client emit {"jsonrpc":"2.0","method":"test/emitted","params":{"n":2}}`,
			}},
		}},
		{"C12 proxy requests get proxy ids and their responses are consumed", []step{
			{A, `{"id":5,"method":"test/ask"}`, []string{`client request {"jsonrpc":"2.0","id":"acp-normalize:1","method":"test/question","params":{"q":1}}`}},
			{A, `{"id":6,"method":"test/ask"}`, []string{`client request {"jsonrpc":"2.0","id":"acp-normalize:2","method":"test/question","params":{"q":1}}`}},
			{C, `{"jsonrpc":"2.0","id":"acp-normalize:2","result":{"a":2}}`, []string{`agent emit {"jsonrpc":"2.0","id":6,"result":{"a":2}}`}},
			{C, `{"jsonrpc":"2.0","id":"acp-normalize:1","result":{"a":1}}`, []string{`agent emit {"jsonrpc":"2.0","id":5,"result":{"a":1}}`}},
			// The proxy consumes only answers to requests it has
			// outstanding: a second answer, or one to an id it never used,
			// is the other side's business and is forwarded.
			{C, `{"jsonrpc":"2.0","id":"acp-normalize:1","result":{"a":1}}`, []string{`agent forward {"jsonrpc":"2.0","id":"acp-normalize:1","result":{"a":1}}`}},
			{C, `{"jsonrpc":"2.0","id":"acp-normalize:99","error":{"code":1,"message":"x"}}`, []string{`agent forward {"jsonrpc":"2.0","id":"acp-normalize:99","error":{"code":1,"message":"x"}}`}},
		}},
		{"P5 a failing rule forwards the original", []step{
			{A, `{"id":1,"method":"test/error","params":{}}`, []string{`client forward {"id":1,"method":"test/error","params":{}}`}},
			{A, `{"id":2,"method":"test/panic"}`, []string{`client forward {"id":2,"method":"test/panic"}`}},
		}},
		{"M initialize response advertises the proxy", []step{
			{C, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`, []string{`agent forward {"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`}},
			{A, `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{"loadSession":true},"authMethods":[]}}`, []string{
				`client replace {"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{"loadSession":true,"_meta":{"acp-normalize":{"modules":["test"],"version":"9.9.9"}}},"authMethods":[]}}`}},
			// Only the response to initialize.
			{C, `{"jsonrpc":"2.0","id":1,"method":"session/new","params":{}}`, []string{`agent forward {"jsonrpc":"2.0","id":1,"method":"session/new","params":{}}`}},
			{A, `{"jsonrpc":"2.0","id":1,"result":{"agentCapabilities":{}}}`, []string{`client forward {"jsonrpc":"2.0","id":1,"result":{"agentCapabilities":{}}}`}},
		}},
		{"M initialize error is untouched", []step{
			{C, `{"id":"i","method":"initialize"}`, []string{`agent forward {"id":"i","method":"initialize"}`}},
			{A, `{"id":"i","error":{"code":-32000,"message":"auth"}}`, []string{`client forward {"id":"i","error":{"code":-32000,"message":"auth"}}`}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runSteps(t, newTestRouter(t, nil, nil), tt.steps)
		})
	}
}

func TestRouterIDsComparedByValue(t *testing.T) {
	// F6: an answer whose id is the request's id spelled
	// differently still answers it: no "agent exited" for it later.
	tests := []struct{ name, request, answer string }{
		{"F6 string with an escape", `"a"`, `"\u0061"`},
		{"F6 request id with an escape", `"\u0062"`, `"b"`},
		{"F6 integer with an exponent", `100`, `1E2`},
		{"F6 integer with a fraction", `7`, `7.0`},
		{"F6 minus zero", `0`, `-0`},
		{"F6 decimal with a trailing zero", `1.50`, `1.5`},
		{"F6 same bytes", `"x"`, `"x"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newTestRouter(t, nil, nil)
			r.Handle(C, []byte(`{"jsonrpc":"2.0","id":`+tt.request+`,"method":"session/prompt"}`), nil)
			r.Handle(A, []byte(`{"jsonrpc":"2.0","id":`+tt.answer+`,"result":{}}`), nil)
			if outs := r.AgentGone(nil); len(outs) != 0 {
				t.Fatalf("answered request reported gone: %s", outs[0].Frame)
			}
		})
	}
	t.Run("F6 different values stay apart", func(t *testing.T) {
		r := newTestRouter(t, nil, nil)
		for _, id := range []string{`"1"`, `1`, `1.5`, `"1.5"`, `"a\"b"`} {
			r.Handle(C, []byte(`{"jsonrpc":"2.0","id":`+id+`,"method":"x"}`), nil)
		}
		r.Handle(A, []byte(`{"jsonrpc":"2.0","id":3E-1,"result":{}}`), nil)
		if n := r.Pending(); n != 5 {
			t.Fatalf("pending = %d, want 5", n)
		}
		outs := r.AgentGone(nil)
		var all []string
		for _, o := range outs {
			all = append(all, string(o.Frame))
		}
		if len(outs) != 5 || !strings.Contains(strings.Join(all, "\n"), `"id":"a\"b","error"`) {
			t.Fatalf("AgentGone answered %d: the raw ids must come back as sent", len(outs))
		}
	})
	t.Run("M initialize result with an escaped result key", func(t *testing.T) {
		// What a parser reads the same gets the advertisement.
		r := newTestRouter(t, nil, nil)
		r.Handle(C, []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize"}`), nil)
		outs := r.Handle(A, []byte(`{"jsonrpc":"2.0","id":0,"r\u0065sult":{"agentCapabilities":{}}}`), nil)
		if len(outs) != 1 || !strings.Contains(string(outs[0].Frame), `"acp-normalize":{`) {
			t.Fatalf("no advertisement: %v", outs)
		}
	})
	t.Run("M initialize answered under an escaped id", func(t *testing.T) {
		r := newTestRouter(t, nil, nil)
		r.Handle(C, []byte(`{"jsonrpc":"2.0","id":"i","method":"initialize"}`), nil)
		outs := r.Handle(A, []byte(`{"jsonrpc":"2.0","id":"\u0069","result":{"agentCapabilities":{}}}`), nil)
		if len(outs) != 1 || !strings.Contains(string(outs[0].Frame), `"acp-normalize":{`) {
			t.Fatalf("no advertisement: %v", outs)
		}
	})
}

// routerAskingAsT1 is a router with the test module and the id token
// "t1" whose module has asked the client its first question, for the
// agent's request 5: the proxy has acp-normalize:t1:1 outstanding (C12).
func routerAskingAsT1(t *testing.T) *Router {
	t.Helper()
	r, err := NewRouter(RouterConfig{Modules: []rewrite.Module{newTestModule()}, IDToken: "t1"})
	if err != nil {
		t.Fatal(err)
	}
	runSteps(t, r, []step{
		{A, `{"id":5,"method":"test/ask"}`, []string{`client request {"jsonrpc":"2.0","id":"acp-normalize:t1:1","method":"test/question","params":{"q":1}}`}},
	})
	return r
}

func TestRouterOwnProxyIDs(t *testing.T) {
	// C12: a proxy's ids carry its token, and it consumes
	// only responses to its own ids; a response to another proxy's request
	// (a proxy in front of or behind it) is forwarded.
	r := routerAskingAsT1(t)
	runSteps(t, r, []step{
		{C, `{"jsonrpc":"2.0","id":"acp-normalize:t2:1","result":{"inner":true}}`, []string{`agent forward {"jsonrpc":"2.0","id":"acp-normalize:t2:1","result":{"inner":true}}`}},
		{C, `{"jsonrpc":"2.0","id":"acp-normalize:1","result":{"untokened":true}}`, []string{`agent forward {"jsonrpc":"2.0","id":"acp-normalize:1","result":{"untokened":true}}`}},
		{C, `{"jsonrpc":"2.0","id":"acp-normalize:t1:1x","result":{}}`, []string{`agent forward {"jsonrpc":"2.0","id":"acp-normalize:t1:1x","result":{}}`}},
		{C, `{"jsonrpc":"2.0","id":"acp-normalize:t1:\u0031","result":{"a":1}}`, []string{`agent emit {"jsonrpc":"2.0","id":5,"result":{"a":1}}`}},
		// Late or unknown responses under its own ids are not answers to
		// anything it asked: forwarded.
		{C, `{"jsonrpc":"2.0","id":"acp-normalize:t1:1","result":{"a":1}}`, []string{`agent forward {"jsonrpc":"2.0","id":"acp-normalize:t1:1","result":{"a":1}}`}},
		{C, `{"jsonrpc":"2.0","id":"acp-normalize:t1:99","result":{}}`, []string{`agent forward {"jsonrpc":"2.0","id":"acp-normalize:t1:99","result":{}}`}},
	})
}

// TestRouterC12ClientIDsLikeTheProxys: a client whose own request ids look
// like the proxy's ("acp-normalize:TOKEN:N", after it saw one) gets every
// answer. The proxy consumes only answers to requests it has
// outstanding, from the side it sent them to; everything else is
// forwarded, and the ids it picks later skip the ones the client used.
func TestRouterC12ClientIDsLikeTheProxys(t *testing.T) {
	r := routerAskingAsT1(t)
	runSteps(t, r, []step{
		// The client reuses the id it saw, and takes the next one, for
		// requests of its own while the proxy's request is open.
		{C, `{"jsonrpc":"2.0","id":"acp-normalize:t1:1","method":"session/prompt","params":{}}`, []string{`agent forward {"jsonrpc":"2.0","id":"acp-normalize:t1:1","method":"session/prompt","params":{}}`}},
		{C, `{"jsonrpc":"2.0","id":"acp-normalize:t1:2","method":"session/prompt","params":{}}`, []string{`agent forward {"jsonrpc":"2.0","id":"acp-normalize:t1:2","method":"session/prompt","params":{}}`}},
		// The agent answers them: the proxy asked the client, not the
		// agent, so these are the client's.
		{A, `{"jsonrpc":"2.0","id":"acp-normalize:t1:1","result":{"stopReason":"end_turn"}}`, []string{`client forward {"jsonrpc":"2.0","id":"acp-normalize:t1:1","result":{"stopReason":"end_turn"}}`}},
		// The proxy's next request skips the id the client has in use.
		{A, `{"id":6,"method":"test/ask"}`, []string{`client request {"jsonrpc":"2.0","id":"acp-normalize:t1:3","method":"test/question","params":{"q":1}}`}},
		{A, `{"jsonrpc":"2.0","id":"acp-normalize:t1:2","result":{"stopReason":"end_turn"}}`, []string{`client forward {"jsonrpc":"2.0","id":"acp-normalize:t1:2","result":{"stopReason":"end_turn"}}`}},
		// The proxy's own requests are still answered to it.
		{C, `{"jsonrpc":"2.0","id":"acp-normalize:t1:3","result":{"a":3}}`, []string{`agent emit {"jsonrpc":"2.0","id":6,"result":{"a":3}}`}},
		{C, `{"jsonrpc":"2.0","id":"acp-normalize:t1:1","result":{"a":1}}`, []string{`agent emit {"jsonrpc":"2.0","id":5,"result":{"a":1}}`}},
	})
	// F6: both client requests were answered, so none is reported gone.
	if n := r.Pending(); n != 0 {
		t.Fatalf("pending = %d after the agent answered every client request", n)
	}
}

func TestRouterFailOpenLogsOnce(t *testing.T) {
	var logs bytes.Buffer
	r := newTestRouter(t, &logs, nil)
	for range 3 {
		r.Handle(A, []byte(`{"id":7,"method":"test/error"}`), nil)
	}
	out := logs.String()
	if n := strings.Count(out, "level=WARN"); n != 1 {
		t.Fatalf("want 1 warning, got %d:\n%s", n, out)
	}
	for _, want := range []string{"rule=X1", "method=test/error", "id=7", "module=test"} {
		if !strings.Contains(out, want) {
			t.Fatalf("log lacks %q:\n%s", want, out)
		}
	}
}

func TestRouterAgentGone(t *testing.T) {
	// F6: client requests still unanswered get -32603 when the agent dies.
	r := newTestRouter(t, nil, nil)
	runSteps(t, r, []step{
		{C, `{"id":1,"method":"session/prompt"}`, []string{`agent forward {"id":1,"method":"session/prompt"}`}},
		{C, `{"id":"b","method":"session/new"}`, []string{`agent forward {"id":"b","method":"session/new"}`}},
		{C, `{"method":"session/cancel"}`, []string{`agent forward {"method":"session/cancel"}`}},
		{A, `{"id":"b","result":{}}`, []string{`client forward {"id":"b","result":{}}`}},
	})
	if r.Pending() != 1 {
		t.Fatalf("pending = %d", r.Pending())
	}
	outs := r.AgentGone(nil)
	if len(outs) != 1 || fmtOut(outs[0]) != `client reply {"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"agent exited"}}` {
		t.Fatalf("AgentGone = %v", outs)
	}
	if len(r.AgentGone(nil)) != 0 {
		t.Fatal("AgentGone answered twice")
	}
}

func TestRouterClientGone(t *testing.T) {
	// C12: unanswered proxy requests reach the module's Close once.
	r := newTestRouter(t, nil, nil)
	r.Handle(A, []byte(`{"id":3,"method":"test/ask"}`), nil)
	outs := r.ClientGone(nil)
	if len(outs) != 1 || fmtOut(outs[0]) != `agent emit {"jsonrpc":"2.0","id":3,"result":{"outcome":"cancelled"}}` {
		t.Fatalf("ClientGone = %v", outs)
	}
	if len(r.ClientGone(nil)) != 0 {
		t.Fatal("ClientGone ran twice")
	}
}

func TestRouterNonJSON(t *testing.T) {
	for _, tt := range []struct {
		name   string
		policy NonJSONPolicy
		want   int
	}{{"F2 dropped by default", DropNonJSON, 0}, {"F2 forwarded on request", ForwardNonJSON, 1}} {
		t.Run(tt.name, func(t *testing.T) {
			var logs bytes.Buffer
			r, err := NewRouter(RouterConfig{Logger: slog.New(slog.NewTextHandler(&logs, nil)), NonJSON: tt.policy})
			if err != nil {
				t.Fatal(err)
			}
			outs := r.Handle(A, []byte("Using worktree: /tmp/w"), nil)
			if len(outs) != tt.want {
				t.Fatalf("outs = %v", outs)
			}
			if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "Using worktree") {
				t.Fatalf("no warning: %s", logs.String())
			}
		})
	}
}

func TestRouterRecording(t *testing.T) {
	// R1: inputs and every output that differs from forwarding.
	var buf bytes.Buffer
	cw := pipe.NewCaptureWriter(&buf, false)
	r := newTestRouter(t, nil, cw)
	r.Handle(A, []byte(`{"id":0,"method":"test/reply"}`), nil)
	r.Handle(A, []byte(`{"method":"session/update","params":{}}`), nil)
	r.Handle(A, []byte(`not json`), nil)
	_ = cw.Flush()
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		// Drop the timestamps.
		i := strings.Index(l, `,"ts":"`)
		j := strings.Index(l[i+7:], `"`)
		lines = append(lines, l[:i]+l[i+7+j+1:])
	}
	want := []string{
		`{"seq":1,"from":"agent","frame":{"id":0,"method":"test/reply"}}`,
		`{"seq":2,"re":1,"op":"drop","to":"client"}`,
		`{"seq":3,"re":1,"op":"reply","to":"agent","frame":{"jsonrpc":"2.0","id":0,"result":{}}}`,
		`{"seq":4,"from":"agent","frame":{"method":"session/update","params":{}}}`,
		`{"seq":5,"from":"agent","text":"not json"}`,
		`{"seq":6,"re":5,"op":"drop","to":"client"}`,
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Fatalf("capture:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
}

func TestRouterPassthroughDoesNotAllocate(t *testing.T) {
	r := newTestRouter(t, nil, nil)
	chunk := []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hello"}}}}`)
	dst := make([]Out, 0, 4)
	if n := testing.AllocsPerRun(1000, func() { dst = r.Handle(A, chunk, dst[:0]) }); n != 0 {
		t.Fatalf("passthrough allocates %v times per frame", n)
	}
}

// passiveModule matches replaced frames and leaves them alone; it never
// looks at the envelope.
func passiveModule() rewrite.Module {
	return rewrite.Module{
		Name: "passive", Doc: "matches replaced frames, changes nothing", Triggers: []string{`"replaced"`},
		New: func(rewrite.Env) rewrite.Rewriter { return passive{} },
	}
}

type passive struct{}

func (passive) Rewrite(*rewrite.Frame) (rewrite.Verdict, error) { return rewrite.Verdict{}, nil }

func TestRouterBookkeepingAfterReplace(t *testing.T) {
	// F6 and M must still see a client request that one module replaced
	// and another then looked at.
	r, err := NewRouter(RouterConfig{Modules: []rewrite.Module{newTestModule(), passiveModule()}, Version: "1"})
	if err != nil {
		t.Fatal(err)
	}
	runSteps(t, r, []step{
		{C, `{"id":4,"method":"test/replace","params":{"x":1}}`, []string{`agent replace {"id":4,"method":"test/replace","params":{"x":"replaced"}}`}},
	})
	if r.Pending() != 1 {
		t.Fatalf("pending = %d, want 1: the replaced request was not tracked", r.Pending())
	}
}

func TestRouterResponseTrackingWithAndWithoutModules(t *testing.T) {
	// F6 bookkeeping must see agent responses whichever prefilter runs:
	// the trigger index (modules on) or plain byte searches (none).
	for _, mods := range [][]rewrite.Module{nil, {newTestModule()}} {
		r, err := NewRouter(RouterConfig{Modules: mods})
		if err != nil {
			t.Fatal(err)
		}
		r.Handle(C, []byte(`{"jsonrpc":"2.0","id":1,"method":"session/prompt"}`), nil)
		r.Handle(C, []byte(`{"jsonrpc":"2.0","id":2,"method":"session/new"}`), nil)
		r.Handle(A, []byte(`{"jsonrpc":"2.0","id":1,"result":{"stopReason":"end_turn"}}`), nil)
		r.Handle(A, []byte(`{"jsonrpc":"2.0", "id" : 2 , "error":{"code":1,"message":"m"}}`), nil)
		if n := r.Pending(); n != 0 {
			t.Fatalf("%d modules: %d requests still pending after their responses", len(mods), n)
		}
	}
}

// TestRouterNestedProxy: an agent that is itself acp-normalize (its
// initialize result carries the advertisement) keeps the modules it
// applies; this proxy turns those off and advertises both lists (M,
// nested proxies). A module the inner proxy lacks stays on.
func TestRouterNestedProxy(t *testing.T) {
	const (
		initReq   = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`
		replaceIn = `{"jsonrpc":"2.0","method":"test/replace","params":{"x":1}}`
	)
	tests := []struct {
		name, inner, advert string
		replaced            bool
	}{
		{"inner applies the module", `{"version":"1.0.0","modules":["test","claude"]}`, `{"modules":["test","claude"],"version":"9.9.9"}`, false},
		{"inner lacks the module", `{"version":"1.0.0","modules":["claude"]}`, `{"modules":["claude","test"],"version":"9.9.9"}`, true},
		{"unreadable advertisement", `7`, `{"modules":["test"],"version":"9.9.9"}`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newTestRouter(t, nil, nil)
			r.Handle(C, []byte(initReq), nil)
			res := `{"jsonrpc":"2.0","id":0,"result":{"agentCapabilities":{"_meta":{"acp-normalize":` + tt.inner + `}}}}`
			want := `{"jsonrpc":"2.0","id":0,"result":{"agentCapabilities":{"_meta":{"acp-normalize":` + tt.advert + `}}}}`
			runSteps(t, r, []step{{A, res, []string{"client replace " + want}}})
			wantFrame := "client forward " + replaceIn
			if tt.replaced {
				wantFrame = `client replace {"jsonrpc":"2.0","method":"test/replace","params":{"x":"replaced"}}`
			}
			runSteps(t, r, []step{{A, replaceIn, []string{wantFrame}}})
		})
	}
}

// TestRouterEnv: every module's Env carries the run's settings, the
// connection's one byte budget and the entry cap (the one path for
// settings: RouterConfig to Env).
func TestRouterEnv(t *testing.T) {
	var envs []rewrite.Env
	mod := func(name string) rewrite.Module {
		return rewrite.Module{Name: name, Doc: "d", Triggers: []string{`"x"`},
			New: func(env rewrite.Env) rewrite.Rewriter { envs = append(envs, env); return nil }}
	}
	settings := rewrite.Settings{"vendor": "b"}
	if _, err := NewRouter(RouterConfig{Modules: []rewrite.Module{mod("a"), mod("b")}, Settings: settings, MaxEntries: 7}); err != nil {
		t.Fatal(err)
	}
	if len(envs) != 2 {
		t.Fatalf("%d modules constructed, want 2", len(envs))
	}
	for _, env := range envs {
		if env.Settings.String("vendor") != "b" || env.MaxEntries != 7 || env.Budget == nil || env.Budget != envs[0].Budget {
			t.Errorf("env %+v: want the run's settings, cap 7 and the shared budget", env)
		}
	}
}

// seenModule records the frames it is handed; it replaces test/emitted
// frames (adding "seen":true) and drops those with "n":3.
type seenModule struct {
	name string
	seen *[]string
	env  rewrite.Env
}

func newSeenModule(name string, triggers []string, seen *[]string) rewrite.Module {
	return rewrite.Module{Name: name, Doc: "records frames", Triggers: triggers,
		New: func(env rewrite.Env) rewrite.Rewriter { return &seenModule{name: name, seen: seen, env: env} }}
}

func (m *seenModule) Rewrite(f *rewrite.Frame) (rewrite.Verdict, error) {
	*m.seen = append(*m.seen, m.name+" "+string(f.Raw))
	var v rewrite.Verdict
	switch f.Method() {
	case "test/emitted":
		if n, _ := f.Lookup("params", "n"); string(n) == "3" {
			v.DropFrame()
			return v, nil
		}
		out, err := rewrite.Set(f.Raw, []byte("true"), "params", "seen")
		if err != nil {
			return v, err
		}
		v.Replace(out)
	case "watch/add", "watch/remove":
		s, _ := rawjson.LookupString(f.Raw, "params", "t")
		if f.Method() == "watch/add" {
			m.env.Watch(s)
		} else {
			m.env.Unwatch(s)
		}
	}
	return v, nil
}

// TestRouterEmitsPassLaterModules: a frame a module emits toward the
// frame's destination is offered to the modules after it (and only to
// them), which may replace or drop it; the frame itself comes first
// (P2). Replies to the sender go back untouched.
func TestRouterEmitsPassLaterModules(t *testing.T) {
	var seen []string
	r, err := NewRouter(RouterConfig{Modules: []rewrite.Module{
		newSeenModule("before", []string{`"test/emitted"`}, &seen),
		newTestModule(),
		newSeenModule("after", []string{`"test/emitted"`, `"result"`}, &seen),
	}})
	if err != nil {
		t.Fatal(err)
	}
	runSteps(t, r, []step{
		{A, `{"method":"test/emit"}`, []string{
			`client forward {"method":"test/emit"}`,
			`client emit {"jsonrpc":"2.0","method":"test/emitted","params":{"n":1,"seen":true}}`,
			`client emit {"jsonrpc":"2.0","method":"test/emitted","params":{"n":2,"seen":true}}`,
		}},
		{A, `{"id":0,"method":"test/reply"}`, []string{`agent reply {"jsonrpc":"2.0","id":0,"result":{}}`}},
	})
	want := []string{
		`after {"jsonrpc":"2.0","method":"test/emitted","params":{"n":1}}`,
		`after {"jsonrpc":"2.0","method":"test/emitted","params":{"n":2}}`,
	}
	if strings.Join(seen, "\n") != strings.Join(want, "\n") {
		t.Errorf("modules saw\n%s\nwant\n%s", strings.Join(seen, "\n"), strings.Join(want, "\n"))
	}
}

// TestRouterWatch: a trigger a module watches selects frames for it from
// the next frame on, even a frame whose twin the trigger memo had
// cleared (P1: before the watch it was never decoded); unwatched, it
// selects nothing again.
func TestRouterWatch(t *testing.T) {
	var seen []string
	r, err := NewRouter(RouterConfig{Modules: []rewrite.Module{
		newSeenModule("w", []string{`"watch/`}, &seen),
	}})
	if err != nil {
		t.Fatal(err)
	}
	chunk := `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"child-7","update":{"sessionUpdate":"agent_message_chunk"}}}`
	steps := []step{
		{A, chunk, []string{"client forward " + chunk}},
		{A, chunk, []string{"client forward " + chunk}},
		{A, `{"method":"watch/add","params":{"t":"\"child-7\""}}`, []string{`client forward {"method":"watch/add","params":{"t":"\"child-7\""}}`}},
		{A, chunk, []string{"client forward " + chunk}},
		{C, `{"method":"watch/remove","params":{"t":"\"child-7\""}}`, []string{`agent forward {"method":"watch/remove","params":{"t":"\"child-7\""}}`}},
		{A, chunk, []string{"client forward " + chunk}},
	}
	runSteps(t, r, steps)
	if n := strings.Count(strings.Join(seen, "\n"), "child-7\",\"update"); n != 1 {
		t.Errorf("the module saw the watched session's chunk %d times, want once (after the watch, before the unwatch):\n%s", n, strings.Join(seen, "\n"))
	}
}

// TestRouterWatchBounded: a connection watches at most maxWatched
// triggers (P6); Watch says when it cannot.
func TestRouterWatchBounded(t *testing.T) {
	var got []bool
	mod := rewrite.Module{Name: "w", Doc: "d", Triggers: []string{`"x"`}, New: func(env rewrite.Env) rewrite.Rewriter {
		for i := range maxWatched + 1 {
			got = append(got, env.Watch(fmt.Sprintf(`"t%d"`, i)))
		}
		got = append(got, env.Watch(""))
		return nil
	}}
	if _, err := NewRouter(RouterConfig{Modules: []rewrite.Module{mod}}); err != nil {
		t.Fatal(err)
	}
	for i, ok := range got {
		if want := i < maxWatched; ok != want {
			t.Errorf("Watch %d = %v, want %v", i, ok, want)
		}
	}
}

// TestRouterP7NestedAdvertisement: behind an inner acp-normalize, the
// methods left to the client and the traits allowed for are the inner
// proxy's for the modules it applies (those are off here), and this
// proxy's for the others. The advertisement says what really happens
// (rules M, P7), and a --client-handles or --client-traits of this proxy
// that only the inner one could honour is a warning, not a silent no-op.
func TestRouterP7NestedAdvertisement(t *testing.T) {
	ask := rewrite.Module{Name: "test", Doc: "d", Triggers: []string{`"test/`}, VendorMethods: []string{"test/*"},
		New: func(rewrite.Env) rewrite.Rewriter { return passive{} }}
	other := rewrite.Module{Name: "other", Doc: "d", Triggers: []string{`"other/`}, VendorMethods: []string{"other/*"},
		New: func(rewrite.Env) rewrite.Rewriter { return passive{} }}
	tests := []struct {
		name     string
		settings rewrite.Settings
		inner    string // the inner proxy's advertisement
		advert   string // this proxy's
		warn     string // in the log at warn, "" for none
	}{
		{"the inner proxy leaves nothing, whatever this one is told",
			rewrite.Settings{rewrite.ClientHandlesOption: "test/ask"},
			`{"modules":["test","other"],"version":"1"}`,
			`{"modules":["test","other"],"version":"9.9.9"}`, "test/ask"},
		{"what the inner proxy leaves is left",
			nil,
			`{"clientHandles":["test/ask"],"clientTraits":["finished-as-new"],"modules":["test","other"],"version":"1"}`,
			`{"clientHandles":["test/ask"],"clientTraits":["finished-as-new"],"modules":["test","other"],"version":"9.9.9"}`, ""},
		{"a module the inner proxy lacks is this one's to leave",
			rewrite.Settings{rewrite.ClientHandlesOption: "test/ask,other/go"},
			`{"clientHandles":["other/go"],"modules":["other"],"version":"1"}`,
			`{"clientHandles":["other/go","test/ask"],"modules":["other","test"],"version":"9.9.9"}`, ""},
		{"traits only the inner proxy's modules would read",
			rewrite.Settings{rewrite.ClientTraitsOption: "reprints-finished"},
			`{"modules":["test","other"],"version":"1"}`,
			`{"modules":["test","other"],"version":"9.9.9"}`, "reprints-finished"},
		{"traits this proxy's own modules read",
			rewrite.Settings{rewrite.ClientTraitsOption: "reprints-finished"},
			`{"modules":["other"],"version":"1"}`,
			`{"clientTraits":["reprints-finished"],"modules":["other","test"],"version":"9.9.9"}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs bytes.Buffer
			r, err := NewRouter(RouterConfig{Modules: []rewrite.Module{ask, other}, Settings: tt.settings, Version: "9.9.9",
				Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))})
			if err != nil {
				t.Fatal(err)
			}
			r.Handle(C, []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"clientInfo":{"name":"editor"}}}`), nil)
			res := `{"jsonrpc":"2.0","id":0,"result":{"agentCapabilities":{"_meta":{"acp-normalize":` + tt.inner + `}}}}`
			want := `{"jsonrpc":"2.0","id":0,"result":{"agentCapabilities":{"_meta":{"acp-normalize":` + tt.advert + `}}}}`
			runSteps(t, r, []step{{A, res, []string{"client replace " + want}}})
			switch {
			case tt.warn == "" && logs.Len() > 0:
				t.Errorf("unexpected warning: %s", logs.String())
			case tt.warn != "" && !strings.Contains(logs.String(), tt.warn):
				t.Errorf("no warning naming %s: %q", tt.warn, logs.String())
			}
		})
	}
}

// TestRouterP7HugeClientName: the client's name goes into one info line
// (P7); a name of a megabyte does not make that line a megabyte.
func TestRouterP7HugeClientName(t *testing.T) {
	var logs bytes.Buffer
	r, err := NewRouter(RouterConfig{Modules: []rewrite.Module{newTestModule()},
		Settings: rewrite.Settings{rewrite.ClientHandlesOption: "test/ask"},
		Logger:   slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))})
	if err != nil {
		t.Fatal(err)
	}
	name := strings.Repeat("n", 1<<20)
	r.Handle(C, []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"clientInfo":{"name":"`+name+`"}}}`), nil)
	if !strings.Contains(logs.String(), "methods left to the client") {
		t.Fatalf("no P7 info line: %q", logs.String())
	}
	if logs.Len() > 4<<10 {
		t.Errorf("the P7 info line is %d bytes for a 1 MiB client name", logs.Len())
	}
	if r.client.Name() != name {
		t.Error("the client's name itself was cut")
	}
}

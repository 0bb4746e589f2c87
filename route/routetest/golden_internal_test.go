package routetest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite/rewritetest"
	"github.com/acp-normalize/acp-normalize/route"
)

// errorsTB keeps the errors a check reports instead of failing.
type errorsTB struct {
	testing.TB
	errs []string
}

func (e *errorsTB) Helper() {}

func (e *errorsTB) Errorf(format string, args ...any) {
	e.errs = append(e.errs, fmt.Sprintf(format, args...))
}

// TestInvariants pins what RunGolden holds every module's outputs to: each
// case is a sequence of outputs and the rule of the error it must report
// ("" for none).
func TestInvariants(t *testing.T) {
	agentReq := pipe.Record{Seq: 1, From: pipe.Agent, Frame: []byte(`{"jsonrpc":"2.0","id":7,"method":"cursor/ask_question","params":{}}`)}
	clientReq := pipe.Record{Seq: 2, From: pipe.Client, Frame: []byte(`{"jsonrpc":"2.0","id":7,"method":"session/prompt","params":{"sessionId":"s","prompt":[]}}`)}
	update := pipe.Record{Seq: 3, From: pipe.Agent, Frame: []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}}`)}
	gone := pipe.Record{Seq: 4, Event: "client_gone"}
	answer := []byte(`{"jsonrpc":"2.0","id":7,"result":{}}`)
	out := func(in pipe.Record, to pipe.Side, op, frame string) Output {
		return Output{Out: route.Out{To: to, Op: op, Frame: []byte(frame), Re: in.Seq}, In: in}
	}
	forward := func(in pipe.Record) Output {
		return Output{Out: route.Out{To: in.From.Other(), Frame: in.Frame}, In: in}
	}
	for _, tc := range []struct {
		name string
		outs []Output
		want string
	}{
		{"forwarded as read", []Output{forward(agentReq), forward(clientReq), forward(update)}, ""},
		{"P1 forwarded but changed", []Output{out(update, pipe.Client, "", strings.Replace(string(update.Frame), "hi", "ho", 1))}, "P1"},
		{"P1 forwarded without an input", []Output{out(gone, pipe.Agent, "", string(answer))}, "P1"},
		{"not JSON", []Output{out(update, pipe.Client, pipe.OpReplace, `{"jsonrpc":`)}, "not JSON"},
		{"C12 answered once", []Output{out(agentReq, pipe.Agent, pipe.OpReply, string(answer)), out(gone, pipe.Client, pipe.OpEmit, string(update.Frame))}, ""},
		{"C12 answered twice", []Output{out(agentReq, pipe.Agent, pipe.OpReply, string(answer)), out(gone, pipe.Agent, pipe.OpEmit, string(answer))}, "C12"},
		{"C12 the client's request answered twice", []Output{forward(clientReq), out(update, pipe.Client, pipe.OpEmit, string(answer)), out(gone, pipe.Client, pipe.OpEmit, string(answer))}, "C12"},
		{"C12 the same id from each side", []Output{forward(clientReq), out(agentReq, pipe.Agent, pipe.OpReply, string(answer)), out(gone, pipe.Client, pipe.OpEmit, string(answer))}, ""},
		{"P3 schema", []Output{out(update, pipe.Client, pipe.OpEmit, `{"jsonrpc":"2.0","method":"session/update","params":{"update":{"sessionUpdate":"agent_message_chunk"}}}`)}, "P3"},
		{"P3 vendor tag", []Output{out(pipe.Record{Seq: 5, From: pipe.Agent, Frame: []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"task"}}}`)},
			pipe.Client, pipe.OpReplace, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"task","_meta":{}}}}`)}, "P3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &errorsTB{TB: t}
			v := invariants{schema: rewritetest.LoadSchema(t)}
			for i, o := range tc.outs {
				v.check(rec, i+1, o)
			}
			switch {
			case tc.want == "" && len(rec.errs) > 0:
				t.Errorf("unexpected errors: %q", rec.errs)
			case tc.want != "" && (len(rec.errs) == 0 || !strings.Contains(strings.Join(rec.errs, "\n"), tc.want)):
				t.Errorf("errors %q, want one citing %s", rec.errs, tc.want)
			}
		})
	}
}

// TestReadInput pins the input lines of a golden case: frames as read,
// non-JSON lines as a capture's text, repeats and the two events.
func TestReadInput(t *testing.T) {
	ins := ReadInput(t, []byte(`{"from":"agent","frame":{"a": 1}}

{"from":"client","text":"not {json"}
{"from":"agent","frame":{"id":"{{n}}"},"repeat":3}
{"event":"client_gone"}
{"event":"agent_gone"}
`))
	var got []string
	for _, in := range ins {
		switch {
		case in.Gone != 0:
			got = append(got, fmt.Sprintf("%d gone %s", in.Seq, in.Gone))
		case in.Text != nil:
			got = append(got, fmt.Sprintf("%d %s text %s", in.Seq, in.From, *in.Text))
		default:
			got = append(got, fmt.Sprintf("%d %s %s", in.Seq, in.From, in.Frame))
		}
	}
	want := []string{`1 agent {"a": 1}`, `2 client text not {json`, `3 agent {"id":"0"}`, `4 agent {"id":"1"}`, `5 agent {"id":"2"}`, `6 gone client`, `7 gone agent`}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestWildcards pins how a CaptureWant names what a re-recording changes:
// "*/id" any session, "*/*" the only launch call, "*" the only parent.
func TestWildcards(t *testing.T) {
	snap := func() map[string]any { return map[string]any{"status": "completed", "agentId": "a1"} }
	for _, tc := range []struct {
		name      string
		got, want map[string]map[string]any
		same      bool
	}{
		{"any session", map[string]map[string]any{"s1/c1": snap()}, map[string]map[string]any{"*/c1": snap()}, true},
		{"the only call", map[string]map[string]any{"s1/c1": snap()}, map[string]map[string]any{"*/*": snap()}, true},
		{"any value", map[string]map[string]any{"s1/c1": snap()}, map[string]map[string]any{"*/*": {"status": "completed", "agentId": Any}}, true},
		{"two calls are not the only one", map[string]map[string]any{"s1/c1": snap(), "s1/c2": snap()}, map[string]map[string]any{"*/*": snap()}, false},
		{"no call", map[string]map[string]any{}, map[string]map[string]any{"*/*": snap()}, false},
	} {
		got := wildcards(tc.got, tc.want)
		if same := fmt.Sprint(got) == fmt.Sprint(tc.want); same != tc.same {
			t.Errorf("%s: wildcards gave %v for want %v", tc.name, got, tc.want)
		}
	}
	launch := map[string]map[string]any{"s1/c1": snap()}
	if got := wildParents(map[string]int{"c1": 3}, map[string]int{"*": 3}, launch); fmt.Sprint(got) != "map[*:3]" {
		t.Errorf("the only parent: %v", got)
	}
	if got := wildParents(map[string]int{"c9": 3}, map[string]int{"*": 3}, launch); fmt.Sprint(got) != "map[c9:3]" {
		t.Errorf("a parent that is not the launch call: %v", got)
	}
	if got := wildParents(map[string]int{"c9": 3}, map[string]int{"*": 3}, nil); fmt.Sprint(got) != "map[*:3]" {
		t.Errorf("the only parent of standard child sessions: %v", got)
	}
	if got := wildParents(map[string]int{"c1": 1, "c2": 2}, map[string]int{"*": 3}, launch); len(got) != 2 {
		t.Errorf("two parents are not the only one: %v", got)
	}
}

package rewritetest

import (
	"bytes"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite"
)

// Module returns a tiny module, for tests only, that makes every kind of
// change the proxy can make, so that the renderers' marks can be pinned:
//
//   - a session/update whose rawInput._toolName is "task" and that has no
//     name gets name "task" (replaced);
//   - a test/noise notification is dropped;
//   - a test/task request is dropped, answered {} (replied) and announced
//     to the client as a tool_call_update (emitted);
//   - a test/ask request is dropped and becomes a session/request_permission
//     to the client (requested); the client's answer is turned into the
//     agent's reply, and an unanswered one is answered "cancelled" when the
//     client goes away.
func Module() rewrite.Module {
	return rewrite.Module{
		Name:     "test",
		Doc:      "test-only module exercising every kind of change",
		Triggers: []string{`"test/`, `"_toolName":"task"`},
		New:      func(rewrite.Env) rewrite.Rewriter { return &testRewriter{} },
	}
}

// FuncModule returns a module, for tests only, whose rule is one
// function with no state: every connection's Rewriter calls rw.
func FuncModule(name, doc string, triggers []string, rw func(*rewrite.Frame) (rewrite.Verdict, error)) rewrite.Module {
	return rewrite.Module{Name: name, Doc: doc, Triggers: triggers,
		New: func(rewrite.Env) rewrite.Rewriter { return rewriterFunc(rw) }}
}

// rewriterFunc is a Rewriter that is a function.
type rewriterFunc func(*rewrite.Frame) (rewrite.Verdict, error)

func (rw rewriterFunc) Rewrite(f *rewrite.Frame) (rewrite.Verdict, error) { return rw(f) }

type testRewriter struct{}

var (
	_ rewrite.Rewriter        = testRewriter{}
	_ rewrite.ResponseHandler = testRewriter{}
	_ rewrite.Closer          = testRewriter{}
)

func (testRewriter) Rewrite(f *rewrite.Frame) (rewrite.Verdict, error) {
	var v rewrite.Verdict
	switch f.Method() {
	case "session/update":
		if _, has := f.Lookup("params", "update", "name"); has {
			return v, nil
		}
		out, err := rawjson.Set(f.Raw, []byte(`"task"`), "params", "update", "name")
		if err != nil {
			return v, rewrite.RuleErrorf("T1", "setting name: %w", err)
		}
		v.Replace(out)
	case "test/noise":
		v.DropFrame()
	case "test/task":
		v.DropFrame()
		reply, err := rewrite.Result(f.ID(), []byte(`{}`))
		if err != nil {
			return v, err
		}
		v.Send(pipe.Agent, reply)
		tc, _ := f.Lookup("params", "toolCallId")
		desc, _ := f.Lookup("params", "description")
		params := []byte(`{"sessionId":"sess-1","update":{"sessionUpdate":"tool_call_update","toolCallId":` + string(tc) + `,"title":"Task: ` + string(bytes.Trim(desc, `"`)) + `"}}`)
		emit, err := rewrite.Notification("session/update", params)
		if err != nil {
			return v, err
		}
		v.Send(pipe.Client, emit)
	case "test/ask":
		v.DropFrame()
		q, _ := f.Lookup("params", "question")
		params := []byte(`{"sessionId":"sess-1","toolCall":{"toolCallId":"ask-1","title":` + string(q) + `},"options":[{"optionId":"yes","name":"Yes","kind":"allow_once"},{"optionId":"no","name":"No","kind":"reject_once"}]}`)
		v.SendRequest(pipe.Client, "session/request_permission", params, bytes.Clone(f.ID()))
	}
	return v, nil
}

func (testRewriter) HandleResponse(cookie any, f *rewrite.Frame) (rewrite.Verdict, error) {
	var v rewrite.Verdict
	outcome := `"cancelled"`
	if id, ok := f.Lookup("result", "outcome", "optionId"); ok && string(id) == `"yes"` {
		outcome = `"answered"`
	}
	reply, err := rewrite.Result(cookie.([]byte), []byte(`{"outcome":{"outcome":`+outcome+`}}`))
	if err != nil {
		return v, err
	}
	v.Send(pipe.Agent, reply)
	return v, nil
}

func (testRewriter) Close(unanswered []any) rewrite.Verdict {
	var v rewrite.Verdict
	for _, c := range unanswered {
		reply, err := rewrite.Result(c.([]byte), []byte(`{"outcome":{"outcome":"cancelled"}}`))
		if err == nil {
			v.Send(pipe.Agent, reply)
		}
	}
	return v
}

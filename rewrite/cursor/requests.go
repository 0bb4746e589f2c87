package cursor

import (
	"bytes"
	"cmp"
	"encoding/json"
	"slices"

	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite"
)

// pendingKind says which Cursor request a proxy request stands for.
type pendingKind int

const (
	kindPlan       pendingKind = iota // cursor/create_plan -> session/request_permission
	kindElicit                        // cursor/ask_question -> elicitation/create
	kindPermission                    // cursor/ask_question -> one permission request per question
)

// pending is a Cursor request waiting for the client's answer to a
// request the proxy sent (the cookie of that request, rule C12).
type pending struct {
	kind     pendingKind
	cursorID []byte // the Cursor request's raw id, echoed in the reply
	session  string
	done     bool   // Cursor got its reply; a late response is ignored
	seq      uint64 // creation order

	// ask_question
	toolCallID string
	status     string // the question call's last vendor status when asked (P7)
	questions  []question
	next       int // the question asked by the open permission request
	answers    []answer
}

// bytes returns the bytes p holds (P6).
func (p *pending) bytes() int64 {
	n := int64(64 + len(p.cursorID) + len(p.session) + len(p.toolCallID))
	for _, q := range p.questions {
		n += q.bytes()
	}
	return n + int64(len(p.answers))*32
}

// bytes returns the bytes q holds.
func (q *question) bytes() int64 {
	n := int64(len(q.id) + len(q.prompt))
	for _, o := range q.options {
		n += int64(len(o.id) + len(o.label))
	}
	return n
}

// outcome is Cursor's reply body {"outcome":{"outcome":KIND,...}}.
type outcome struct {
	Outcome string          `json:"outcome"`
	Todos   json.RawMessage `json:"todos,omitempty"`
	Answers []answer        `json:"answers,omitempty"`
	File    string          `json:"filePath,omitempty"`
	Reason  string          `json:"reason,omitempty"`
}

type answer struct {
	QuestionID        string   `json:"questionId"`
	SelectedOptionIDs []string `json:"selectedOptionIds"`
}

// reply returns Cursor's reply frame for the request with raw id.
func reply(id []byte, o outcome) ([]byte, error) {
	return rewrite.Result(id, struct {
		Outcome outcome `json:"outcome"`
	}{o})
}

// sendReply appends Cursor's reply for raw id to v; a frame without an id
// (a notification) gets none.
func sendReply(v *rewrite.Verdict, rule string, id []byte, o outcome) error {
	if id == nil {
		return nil
	}
	b, err := reply(id, o)
	if err != nil {
		return rewrite.RuleErrorf(rule, "reply: %w", err)
	}
	v.Send(pipe.Agent, b)
	return nil
}

// ask sends a request to the client for p and remembers p as open.
func (r *rewriter) ask(v *rewrite.Verdict, p *pending, method string, params []byte) {
	if p.seq == 0 {
		r.seq++
		p.seq = r.seq
	}
	v.SendRequest(pipe.Client, method, params, p)
	r.open.Put(p, struct{}{})
}

// finish answers Cursor for p once and forgets it.
func (r *rewriter) finish(out []rewrite.Output, p *pending, o outcome) []rewrite.Output {
	if p.done {
		return out
	}
	p.done = true
	r.open.Delete(p)
	b, err := reply(p.cursorID, o)
	if err != nil {
		r.log.Error("reply to Cursor not built", "rule", "C12", "err", err)
		return out
	}
	return append(out, rewrite.Output{To: pipe.Agent, Frame: b})
}

// HandleResponse implements rewrite.ResponseHandler: the client answered
// a request the proxy sent (C9, C10, C12).
func (r *rewriter) HandleResponse(cookie any, f *rewrite.Frame) (rewrite.Verdict, error) {
	var v rewrite.Verdict
	p, ok := cookie.(*pending)
	if !ok || p.done {
		return v, nil
	}
	failed := f.Envelope().Error
	result, _ := f.Lookup("result")
	switch p.kind {
	case kindPlan:
		o := outcome{Outcome: "cancelled"}
		if !failed && strAt(result, "outcome", "outcome") == "selected" {
			switch strAt(result, "outcome", "optionId") {
			case "accept":
				o.Outcome = "accepted"
			case "reject":
				o.Outcome = "rejected"
			}
		}
		v.Out = r.finish(v.Out, p, o)
	case kindElicit:
		v.Out = r.finish(v.Out, p, elicitOutcome(p, failed, result))
	case kindPermission:
		return r.permissionAnswer(p, failed, result)
	}
	return v, nil
}

// Close implements rewrite.Closer: the client is gone, so every Cursor
// request still waiting for it gets cancelled (C12).
func (r *rewriter) Close(unanswered []any) rewrite.Verdict {
	var v rewrite.Verdict
	var ps []*pending
	for _, c := range unanswered {
		if p, ok := c.(*pending); ok {
			ps = append(ps, p)
		}
	}
	// The proxy hands the cookies over in no particular order; Cursor gets
	// its answers in the order it asked.
	slices.SortFunc(ps, func(a, b *pending) int { return cmp.Compare(a.seq, b.seq) })
	for _, p := range ps {
		v.Out = r.finish(v.Out, p, outcome{Outcome: "cancelled"})
	}
	return v
}

// cancelSession answers Cursor cancelled for the session's open requests;
// their responses, if they come, are then ignored.
func (r *rewriter) cancelSession(sid string, out []rewrite.Output) []rewrite.Output {
	var ps []*pending
	r.open.Each(func(p *pending, _ struct{}) bool {
		if p.session == sid {
			ps = append(ps, p)
		}
		return true
	})
	for _, p := range ps {
		out = r.finish(out, p, outcome{Outcome: "cancelled"})
	}
	return out
}

// rawArray returns the JSON array of the raw values.
func rawArray(items [][]byte) json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('[')
	for i, it := range items {
		if i > 0 {
			b.WriteByte(',')
		}
		if err := json.Compact(&b, it); err != nil {
			b.Write(it)
		}
	}
	b.WriteByte(']')
	return b.Bytes()
}

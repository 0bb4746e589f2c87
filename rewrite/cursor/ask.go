package cursor

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
	"github.com/acp-normalize/acp-normalize/rewrite"
)

// question is one question of cursor/ask_question.
type question struct {
	id       string
	prompt   string
	options  []option
	multiple bool
}

type option struct{ id, label string }

// parseQuestions returns the usable questions (with an id and at least one
// option with an id).
func parseQuestions(raw []byte) []question {
	var qs []question
	if rawjson.FirstByte(raw) != '[' {
		return nil
	}
	_ = rawjson.Elements(raw, func(el []byte) bool {
		q := question{id: strAt(el, "id"), prompt: strAt(el, "prompt")}
		if m, _ := rawjson.Lookup(el, "allowMultiple"); string(m) == "true" {
			q.multiple = true
		}
		if opts, ok := rawjson.Lookup(el, "options"); ok && rawjson.FirstByte(opts) == '[' {
			_ = rawjson.Elements(opts, func(o []byte) bool {
				op := option{id: strAt(o, "id"), label: strAt(o, "label")}
				if op.id != "" {
					if op.label == "" {
						op.label = op.id
					}
					q.options = append(q.options, op)
				}
				return true
			})
		}
		if q.id != "" && len(q.options) > 0 {
			qs = append(qs, q)
		}
		return true
	})
	return qs
}

// askQuestion handles cursor/ask_question (C10).
func (r *rewriter) askQuestion(f *rewrite.Frame) (rewrite.Verdict, error) {
	var v rewrite.Verdict
	v.DropFrame()
	id := f.ID()
	if id == nil {
		r.log.Debug("cursor/ask_question notification dropped: nobody waits for the answer", "rule", "C10")
		return v, nil
	}
	params, _ := f.Lookup("params")
	tcid := strAt(params, "toolCallId")
	sid := r.attribute(params, tcid)
	qraw, _ := rawjson.Lookup(params, "questions")
	qs := parseQuestions(qraw)
	switch {
	case len(qs) == 0:
		return v, sendReply(&v, "C10", id, outcome{Outcome: "skipped", Reason: "no question with options to ask"})
	case sid == "":
		return v, sendReply(&v, "C10", id, outcome{Outcome: "cancelled"})
	}
	p := &pending{cursorID: bytes.Clone(id), session: sid, toolCallID: tcid, questions: qs, status: r.lastStatus(tcid)}
	if r.elicitForm {
		p.kind = kindElicit
		params, err := elicitParams(sid, tcid, strAt(params, "title"), qs)
		if err != nil {
			return v, rewrite.RuleErrorf("C10", "elicitation: %w", err)
		}
		r.ask(&v, p, "elicitation/create", params)
		return v, nil
	}
	if tcid == "" {
		return v, sendReply(&v, "C10", id, outcome{Outcome: "skipped", Reason: "no toolCallId to ask the client about"})
	}
	p.kind = kindPermission
	req, err := questionPermission(p)
	if err != nil {
		return v, rewrite.RuleErrorf("C10", "permission request: %w", err)
	}
	r.ask(&v, p, "session/request_permission", req)
	return v, nil
}

// enumOption is a titled choice of an elicitation property.
type enumOption struct {
	Const string `json:"const"`
	Title string `json:"title"`
}

// elicitParams returns the elicitation/create params: one property per
// question, a single choice (string with oneOf) or a multiple choice
// (array of anyOf), all required.
func elicitParams(sid, tcid, title string, qs []question) ([]byte, error) {
	var props bytes.Buffer
	props.WriteByte('{')
	required := make([]string, 0, len(qs))
	for i, q := range qs {
		choices := make([]enumOption, 0, len(q.options))
		for _, o := range q.options {
			choices = append(choices, enumOption{o.id, o.label})
		}
		var prop any
		if q.multiple {
			prop = struct {
				Type  string `json:"type"`
				Title string `json:"title,omitempty"`
				Items struct {
					AnyOf []enumOption `json:"anyOf"`
				} `json:"items"`
			}{Type: "array", Title: q.prompt, Items: struct {
				AnyOf []enumOption `json:"anyOf"`
			}{choices}}
		} else {
			prop = struct {
				Type  string       `json:"type"`
				Title string       `json:"title,omitempty"`
				OneOf []enumOption `json:"oneOf"`
			}{"string", q.prompt, choices}
		}
		k, err := rawjson.Marshal(q.id)
		if err != nil {
			return nil, err
		}
		pv, err := rawjson.Marshal(prop)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			props.WriteByte(',')
		}
		props.Write(k)
		props.WriteByte(':')
		props.Write(pv)
		required = append(required, q.id)
	}
	props.WriteByte('}')
	message := title
	if message == "" {
		for i, q := range qs {
			if q.prompt == "" {
				continue
			}
			if i > 0 && message != "" {
				message += "\n"
			}
			message += q.prompt
		}
	}
	if message == "" {
		message = "Cursor asks a question"
	}
	return rawjson.Marshal(struct {
		SessionID       string `json:"sessionId"`
		ToolCallID      string `json:"toolCallId,omitempty"`
		Mode            string `json:"mode"`
		Message         string `json:"message"`
		RequestedSchema struct {
			Type       string          `json:"type"`
			Properties json.RawMessage `json:"properties"`
			Required   []string        `json:"required"`
		} `json:"requestedSchema"`
	}{SessionID: sid, ToolCallID: tcid, Mode: "form", Message: message, RequestedSchema: struct {
		Type       string          `json:"type"`
		Properties json.RawMessage `json:"properties"`
		Required   []string        `json:"required"`
	}{"object", props.Bytes(), required}})
}

// elicitOutcome maps the client's elicitation answer to Cursor's reply.
func elicitOutcome(p *pending, failed bool, result []byte) outcome {
	if failed {
		return outcome{Outcome: "cancelled"}
	}
	switch strAt(result, "action") {
	case "accept":
	case "decline":
		return outcome{Outcome: "skipped", Reason: "the user declined to answer"}
	default:
		return outcome{Outcome: "cancelled"}
	}
	content, _ := rawjson.Lookup(result, "content")
	answers := make([]answer, 0, len(p.questions))
	var missing []string
	for _, q := range p.questions {
		a := answer{QuestionID: q.id, SelectedOptionIDs: []string{}}
		add := func(raw []byte) {
			// Only the ids of offered options are answers.
			if s := str(raw); s != "" && q.offers(s) && !slices.Contains(a.SelectedOptionIDs, s) {
				a.SelectedOptionIDs = append(a.SelectedOptionIDs, s)
			}
		}
		if v, ok := rawjson.Lookup(content, q.id); ok {
			switch rawjson.FirstByte(v) {
			case '"':
				add(v)
			case '[':
				_ = rawjson.Elements(v, func(el []byte) bool { add(el); return true })
			}
		}
		if len(a.SelectedOptionIDs) == 0 {
			missing = append(missing, q.id)
		}
		answers = append(answers, a)
	}
	if len(missing) > 0 {
		// C10: answered only when every question was answered.
		return outcome{Outcome: "skipped", Reason: "no answer to: " + strings.Join(missing, ", ")}
	}
	return outcome{Outcome: "answered", Answers: answers}
}

// offers reports whether q has an option with id.
func (q *question) offers(id string) bool {
	for _, o := range q.options {
		if o.id == id {
			return true
		}
	}
	return false
}

// questionPermission returns the permission request for p's next question.
func questionPermission(p *pending) ([]byte, error) {
	q := p.questions[p.next]
	opts := make([]permissionOption, 0, len(q.options)+1)
	for _, o := range q.options {
		opts = append(opts, permissionOption{OptionID: o.id, Name: o.label, Kind: "allow_once"})
	}
	opts = append(opts, permissionOption{OptionID: skipOptionID(q), Name: "Skip", Kind: "reject_once"})
	return rawjson.Marshal(permissionParams{
		SessionID: p.session,
		ToolCall:  permissionToolCall{ToolCallID: p.toolCallID, Title: q.prompt, Status: p.status},
		Options:   opts,
	})
}

// skipOptionID returns the id of the proxy's own "Skip" option for q:
// "skip", or, when one of Cursor's options already has that id, an id
// none of them has, so the client's choice is never ambiguous (C10).
func skipOptionID(q question) string {
	id := "skip"
	for taken := true; taken; {
		taken = false
		for _, o := range q.options {
			if o.id == id {
				taken = true
			}
		}
		if taken {
			if id == "skip" {
				id = "acp-normalize:skip"
			} else {
				id += "_"
			}
		}
	}
	return id
}

// permissionAnswer takes the client's answer to one question and asks the
// next one, or answers Cursor.
func (r *rewriter) permissionAnswer(p *pending, failed bool, result []byte) (rewrite.Verdict, error) {
	var v rewrite.Verdict
	if failed || strAt(result, "outcome", "outcome") != "selected" {
		v.Out = r.finish(v.Out, p, outcome{Outcome: "cancelled"})
		return v, nil
	}
	q := p.questions[p.next]
	chosen := strAt(result, "outcome", "optionId")
	valid := false
	if chosen == skipOptionID(q) {
		v.Out = r.finish(v.Out, p, outcome{Outcome: "skipped", Reason: "the user skipped the question"})
		return v, nil
	}
	for _, o := range q.options {
		if o.id == chosen {
			valid = true
		}
	}
	if !valid {
		// An option the proxy never offered.
		v.Out = r.finish(v.Out, p, outcome{Outcome: "skipped", Reason: "the client chose an option that was not offered"})
		return v, nil
	}
	p.answers = append(p.answers, answer{QuestionID: q.id, SelectedOptionIDs: []string{chosen}})
	p.next++
	if p.next == len(p.questions) {
		v.Out = r.finish(v.Out, p, outcome{Outcome: "answered", Answers: p.answers})
		return v, nil
	}
	req, err := questionPermission(p)
	if err != nil {
		v.Out = r.finish(v.Out, p, outcome{Outcome: "cancelled"})
		return v, rewrite.RuleErrorf("C10", "permission request: %w", err)
	}
	r.ask(&v, p, "session/request_permission", req)
	return v, nil
}

package routetest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/rewrite/rewritetest"
	"github.com/acp-normalize/acp-normalize/route"
)

// RunGolden runs each testdata/golden/*.txtar case through a Router with
// the modules mods returns for the case's file name (fresh for each case).
// The case's name cites the rule it pins (C3_task_after_completion). A
// case has:
//
//   - a comment (the text before the first section) saying what the case
//     pins; its "options:" line gives the router's settings, spelled as a
//     capture records them ("options: vendor=codex
//     forward-unknown-vendor-methods"), and cap=N for the cap on every
//     table's entries (route.RouterConfig.MaxEntries);
//   - input.jsonl: one line per input, see [ReadInput];
//   - output.jsonl: what each side receives ([Format]), compared byte for
//     byte (go test -update rewrites it);
//   - snapshots.json (optional, hand-written, never rewritten): the last
//     snapshot of each launch call, by "sessionId/toolCallId";
//   - parents.json (optional, hand-written): the parentToolCallId of each
//     output line that carries one, by line number.
//
// Every case is also held to the invariants every module keeps: a frame
// forwarded as is is byte-identical to its input (P1); every frame the
// proxy wrote is valid JSON, and toward the client it matches the ACP
// schema (P3, [rewritetest.Schema.CheckOutput]) with a standard
// sessionUpdate and status; no request is answered twice (C12); no module
// panics or logs an error. checks add a module's own invariants.
func RunGolden(t *testing.T, mods func(name string) []rewrite.Module, checks ...OutputCheck) {
	t.Helper()
	checkGoldenLayout(t)
	schema := rewritetest.LoadSchema(t)
	rewritetest.RunGolden(t, filepath.Join("testdata", "golden", "*.txtar"), func(t *testing.T, c *rewritetest.Case) {
		in, ok := c.File("input.jsonl")
		if !ok {
			t.Fatal("no input.jsonl section")
		}
		ms := mods(filepath.Base(c.Path))
		opts := caseOptions(t, ms, c.Comment())
		logs := rewritetest.NewLogRecorder()
		logs.FailOnPanic = t
		r, err := route.NewRouter(route.RouterConfig{Modules: ms, Logger: logs.Logger(), Version: Version,
			Settings: opts.Settings, MaxEntries: opts.MaxEntries})
		if err != nil {
			t.Fatalf("NewRouter: %v", err)
		}
		outs := Feed(r, ReadInput(t, in))
		inv := invariants{schema: schema}
		for i, o := range outs {
			inv.check(t, i+1, o)
			for _, check := range checks {
				check(t, opts, o)
			}
		}
		if spec, ok := c.File("snapshots.json"); ok {
			CheckSnapshots(t, outs, spec)
		}
		if spec, ok := c.File("parents.json"); ok {
			var want map[string]string
			if err := json.Unmarshal(spec, &want); err != nil {
				t.Fatalf("parents.json: %v", err)
			}
			if got := Parents(t, outs); !reflect.DeepEqual(got, want) {
				t.Errorf("parentToolCallId by output line: got %v, want %v", got, want)
			}
		}
		if recs := logs.Find(slog.LevelError, ""); len(recs) > 0 {
			t.Errorf("a module logged an error: %s", recs[0].Message)
		}
		c.Check(t, "output.jsonl", Format(outs))
	})
}

// Golden is RunGolden with the one module m for every case.
func Golden(t *testing.T, m rewrite.Module, checks ...OutputCheck) {
	t.Helper()
	RunGolden(t, func(string) []rewrite.Module { return []rewrite.Module{m} }, checks...)
}

// OutputCheck checks one output of a golden case run with opts, for an
// invariant of one module (the cursor module's C1: no cursor/ method
// reaches the client).
type OutputCheck func(t *testing.T, opts CaseOptions, o Output)

// CaseOptions are the router settings of a golden case ("options:").
type CaseOptions struct {
	Settings   rewrite.Settings
	MaxEntries int
}

// caseOptions reads a case's "options:" comment lines.
func caseOptions(t *testing.T, mods []rewrite.Module, comment []byte) CaseOptions {
	t.Helper()
	var o CaseOptions
	var recorded []string
	for _, line := range strings.Split(string(comment), "\n") {
		rest, ok := strings.CutPrefix(line, "options:")
		if !ok {
			continue
		}
		for _, w := range strings.Fields(rest) {
			if n, ok := strings.CutPrefix(w, "cap="); ok {
				c, err := strconv.Atoi(n)
				if err != nil || c <= 0 {
					t.Fatalf("options: bad cap %q", w)
				}
				o.MaxEntries = c
				continue
			}
			recorded = append(recorded, w)
		}
	}
	o.Settings = Settings(t, mods, recorded...)
	return o
}

// checkGoldenLayout fails when golden cases sit where RunGolden does not
// look (testdata/*.txtar): they would silently never run.
func checkGoldenLayout(t *testing.T) {
	t.Helper()
	stray, _ := filepath.Glob(filepath.Join("testdata", "*.txtar"))
	if len(stray) > 0 {
		t.Fatalf("golden cases belong under testdata/golden/ (named by the rule they pin); not run: %s", strings.Join(stray, ", "))
	}
}

// Input is one input of a golden case: a frame from a side, or an event.
type Input struct {
	pipe.Record
	// Gone is the side that went away ("client_gone", "agent_gone"
	// events: Router.ClientGone, Router.AgentGone); 0 for a frame.
	Gone pipe.Side
}

// inputLine is one line of input.jsonl.
type inputLine struct {
	From  string          `json:"from"`
	Frame json.RawMessage `json:"frame"`
	Text  *string         `json:"text"`
	// Repeat feeds the line that many times, with {{n}} in the frame
	// replaced by 0, 1, ...
	Repeat int    `json:"repeat"`
	Event  string `json:"event"`
}

// ReadInput reads a case's input.jsonl. Each line is one of:
//
//   - {"from":"client"|"agent","frame":<JSON>}: a frame, its bytes as
//     written (a capture's input record: lines can be copied from one);
//   - {"from":...,"text":"..."}: a line that is not JSON, as a capture
//     records it (malformed frames, P5);
//   - either with "repeat":N: the line N times, {{n}} in it replaced by
//     0..N-1 (caps, P6);
//   - {"event":"client_gone"} or {"event":"agent_gone"}: that side went
//     away (the router's ClientGone or AgentGone).
//
// Inputs are numbered from 1 (Record.Seq, an output's Re).
func ReadInput(t testing.TB, data []byte) []Input {
	t.Helper()
	var ins []Input
	for i, line := range bytes.Split(data, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var l inputLine
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&l); err != nil {
			t.Fatalf("input.jsonl line %d: %v (keys: from, frame, text, repeat, event)", i+1, err)
		}
		switch l.Event {
		case "client_gone", "agent_gone":
			side := pipe.Client
			if l.Event == "agent_gone" {
				side = pipe.Agent
			}
			ins = append(ins, Input{Record: pipe.Record{Seq: int64(len(ins) + 1), Event: l.Event}, Gone: side})
			continue
		case "":
		default:
			t.Fatalf("input.jsonl line %d: unknown event %q (have client_gone, agent_gone)", i+1, l.Event)
		}
		side, ok := pipe.ParseSide(l.From)
		if !ok {
			t.Fatalf("input.jsonl line %d: bad from %q", i+1, l.From)
		}
		frame := []byte(l.Frame)
		if l.Text != nil {
			frame = []byte(*l.Text)
		}
		if len(frame) == 0 {
			t.Fatalf("input.jsonl line %d: no frame or text", i+1)
		}
		for k := range max(l.Repeat, 1) {
			f := frame
			if l.Repeat > 0 {
				f = bytes.ReplaceAll(frame, []byte("{{n}}"), []byte(strconv.Itoa(k)))
			}
			rec := pipe.Record{Seq: int64(len(ins) + 1), From: side}
			if l.Text != nil {
				s := string(f)
				rec.Text = &s
			} else {
				rec.Frame = f
			}
			ins = append(ins, Input{Record: rec})
		}
	}
	return ins
}

// Feed runs inputs through r, as the live proxy would, and returns every
// output with the input that caused it.
func Feed(r *route.Router, ins []Input) []Output {
	var outs []Output
	var buf []route.Out
	for _, in := range ins {
		switch in.Gone {
		case pipe.Client:
			buf = r.ClientGone(buf[:0])
		case pipe.Agent:
			buf = r.AgentGone(buf[:0])
		default:
			buf = r.Handle(in.From, inputBytes(in.Record), buf[:0])
		}
		for _, o := range buf {
			o.Frame = bytes.Clone(o.Frame)
			outs = append(outs, Output{Out: o, In: in.Record})
		}
	}
	return outs
}

// inputBytes returns the bytes an input record stands for.
func inputBytes(rec pipe.Record) []byte {
	if rec.Frame == nil && rec.Text != nil {
		return []byte(*rec.Text)
	}
	return rec.Frame
}

// invariants checks the outputs of one golden case, in order.
type invariants struct {
	schema *rewritetest.Schema
	// open counts the answers each side got to each of its requests
	// ("agent 7" -> 1), from when the request passed (C12: once).
	open map[string]int
	// seen is the last input whose request was counted.
	seen int64
}

func (v *invariants) check(t testing.TB, n int, o Output) {
	t.Helper()
	in := inputBytes(o.In)
	if v.open == nil {
		v.open = map[string]int{}
	}
	if env := pipe.Peek(in); o.In.Seq != v.seen && o.In.From != 0 && env.Kind == pipe.Request {
		v.open[fmt.Sprintf("%s %s", o.In.From, env.ID)] = 0
	}
	v.seen = o.In.Seq
	if o.Op == "" {
		if o.In.Event != "" || !bytes.Equal(o.Frame, in) {
			t.Errorf("P1: output %d is forwarded but differs from its input:\n in: %s\nout: %s", n, in, o.Frame)
		}
	} else if o.Op != pipe.OpDrop && !json.Valid(o.Frame) {
		t.Errorf("output %d (%s) is not JSON: %s", n, o.Op, o.Frame)
		return
	}
	if o.Op == pipe.OpDrop {
		return
	}
	if env := pipe.Peek(o.Frame); env.Kind == pipe.Response {
		key := fmt.Sprintf("%s %s", o.To, env.ID)
		if k, ok := v.open[key]; ok {
			if k > 0 {
				t.Errorf("C12: output %d answers %s's request %s a second time: %s", n, o.To, env.ID, o.Frame)
			}
			v.open[key] = k + 1
		}
	}
	if o.To == pipe.Client && o.Op != "" {
		v.schema.CheckOutput(t, o.Op, o.In.Frame, o.Frame)
		checkStandardUpdate(t, n, o.Frame)
	}
}

// standardUpdates are the sessionUpdate tags the proxy may write (P3),
// session_message and subagent_update from the Subagent Sessions standard.
var standardUpdates = map[string]bool{
	"user_message_chunk": true, "agent_message_chunk": true, "agent_thought_chunk": true,
	"tool_call": true, "tool_call_update": true, "plan": true, "available_commands_update": true,
	"current_mode_update": true, "config_option_update": true, "session_info_update": true,
	"usage_update": true, "subagent_update": true, "session_message": true,
}

// checkStandardUpdate checks that a session/update the proxy wrote to the
// client has a standard sessionUpdate and tool call status (P3), which
// the schema check leaves to a vendor frame that already fails it.
func checkStandardUpdate(t testing.TB, n int, frame []byte) {
	t.Helper()
	var msg struct {
		Method string `json:"method"`
		Params struct {
			Update struct {
				SessionUpdate string `json:"sessionUpdate"`
				Status        string `json:"status"`
			} `json:"update"`
		} `json:"params"`
	}
	if json.Unmarshal(frame, &msg) != nil || msg.Method != "session/update" {
		return
	}
	if u := msg.Params.Update.SessionUpdate; !standardUpdates[u] {
		t.Errorf("P3: output %d: sessionUpdate %q is not standard: %s", n, u, frame)
	}
	switch msg.Params.Update.Status {
	case "", "pending", "in_progress", "completed", "failed":
	default:
		t.Errorf("P3: output %d: status %q is not standard: %s", n, msg.Params.Update.Status, frame)
	}
}

// CheckSnapshots compares the last snapshots of outs with the JSON object
// spec ("sessionId/toolCallId" -> snapshot).
func CheckSnapshots(t testing.TB, outs []Output, spec []byte) {
	t.Helper()
	var want map[string]map[string]any
	if err := json.Unmarshal(spec, &want); err != nil {
		t.Fatalf("expected snapshots: %v", err)
	}
	if got := Snapshots(t, outs); !reflect.DeepEqual(got, want) {
		g, _ := json.MarshalIndent(got, "", "  ")
		w, _ := json.MarshalIndent(want, "", "  ")
		t.Errorf("last snapshots differ:\ngot  %s\nwant %s", g, w)
	}
}

// Settings parses settings given as a capture records them
// ("name=value", or a bool option's name) against the shared options and
// those of mods.
func Settings(t testing.TB, mods []rewrite.Module, recorded ...string) rewrite.Settings {
	t.Helper()
	s, unknown := rewrite.ParseRecorded(recorded, rewrite.AllOptions(mods))
	if len(unknown) > 0 {
		t.Fatalf("unknown settings %q", unknown)
	}
	return s
}

package cursor_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/proxy"
	"github.com/acp-normalize/acp-normalize/proxy/proxytest"
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/rewrite/cursor"
	"github.com/acp-normalize/acp-normalize/rewrite/rewritetest"
)

// scenarioOpts are a case's router settings.
type scenarioOpts struct {
	settings rewrite.Settings
	cap      int // RouterConfig.MaxEntries
}

// forward reports whether unknown vendor methods pass through (C13).
func (o scenarioOpts) forward() bool { return o.settings.Bool(rewrite.ForwardUnknownVendorMethods) }

// scenarioOptions reads "options: ..." lines of the comment: option
// settings as a capture records them, and cap=N for the tables' cap.
func scenarioOptions(t *testing.T, comment []byte) scenarioOpts {
	var o scenarioOpts
	var recorded []string
	for _, line := range strings.Split(string(comment), "\n") {
		rest, ok := strings.CutPrefix(line, "options:")
		if !ok {
			continue
		}
		for _, w := range strings.Fields(rest) {
			if n, ok := strings.CutPrefix(w, "cap="); ok {
				c, err := strconv.Atoi(n)
				if err != nil {
					t.Fatalf("bad option %q", w)
				}
				o.cap = c
				continue
			}
			recorded = append(recorded, w)
		}
	}
	o.settings = proxytest.Settings(t, []rewrite.Module{cursor.Module()}, recorded...)
	return o
}

// inputLine is one line of input.jsonl: a frame (or raw bytes) from a side, repeated
// with {{n}} replaced by 0..repeat-1 when repeat is set; or an event
// (client_gone, agent_gone).
type inputLine struct {
	From  string          `json:"from"`
	Frame json.RawMessage `json:"frame"`
	// Raw is a frame given as a string, for bytes that are not valid JSON.
	Raw    *string `json:"raw"`
	Repeat int     `json:"repeat"`
	Event  string  `json:"event"`
}

// runScenario feeds the input lines through a Router with the cursor
// module and returns the output lines. It checks the invariants every
// scenario must keep (P1, P3, C1/C13).
func runScenario(t *testing.T, schema *rewritetest.Schema, opts scenarioOpts, input []byte) []byte {
	t.Helper()
	logs := rewritetest.NewLogRecorder()
	logs.FailOnPanic = t
	r, err := proxy.NewRouter(proxy.RouterConfig{
		Modules:    []rewrite.Module{cursor.Module()},
		Settings:   opts.settings,
		MaxEntries: opts.cap,
		Logger:     logs.Logger(),
		Version:    "test",
	})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	seq := 0
	answers := map[string]int{} // Cursor request id -> answers sent to Cursor
	emit := func(outs []proxy.Out, in []byte) {
		for _, o := range outs {
			if env := pipe.Peek(o.Frame); o.To == pipe.Agent && env.Kind == pipe.Response {
				if n, ok := answers[string(env.ID)]; ok {
					if n > 0 {
						t.Errorf("C12: Cursor request %s answered twice: %s", env.ID, o.Frame)
					}
					answers[string(env.ID)] = n + 1
				}
			}
			op := o.Op
			if op == "" {
				op = "forward"
				if in == nil || !bytes.Equal(o.Frame, in) {
					t.Errorf("P1: forwarded frame differs from input:\n in: %s\nout: %s", in, o.Frame)
				}
			}
			checkFrame(t, opts, o)
			if o.Op != "" && o.To == pipe.Client && !opts.forward() {
				schema.CheckOutput(t, o.Op, in, o.Frame)
			}
			fmt.Fprintf(&out, `{"re":%d,"to":%q,"op":%q,"frame":%s}`+"\n", o.Re, o.To.String(), op, o.Frame)
		}
	}
	for i, line := range bytes.Split(input, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var in inputLine
		if err := json.Unmarshal(line, &in); err != nil {
			t.Fatalf("input line %d: %v", i+1, err)
		}
		switch in.Event {
		case "client_gone":
			emit(r.ClientGone(nil), nil)
			continue
		case "agent_gone":
			emit(r.AgentGone(nil), nil)
			continue
		case "":
		default:
			t.Fatalf("input line %d: unknown event %q", i+1, in.Event)
		}
		side, ok := pipe.ParseSide(in.From)
		if !ok {
			t.Fatalf("input line %d: bad from %q", i+1, in.From)
		}
		n := max(in.Repeat, 1)
		for k := range n {
			frame := []byte(in.Frame)
			if in.Raw != nil {
				frame = []byte(*in.Raw)
			}
			if in.Repeat > 0 {
				frame = bytes.ReplaceAll(frame, []byte("{{n}}"), []byte(strconv.Itoa(k)))
			}
			seq++
			if env := pipe.Peek(frame); side == pipe.Agent && env.Kind == pipe.Request &&
				strings.HasPrefix(strings.TrimPrefix(string(env.Method), "_"), "cursor/") {
				answers[string(env.ID)] = 0
			}
			emit(r.Handle(side, frame, nil), frame)
		}
	}
	return out.Bytes()
}

// standardUpdates are the sessionUpdate tags the proxy may write (P3).
var standardUpdates = map[string]bool{
	"user_message_chunk": true, "agent_message_chunk": true, "agent_thought_chunk": true,
	"tool_call": true, "tool_call_update": true, "plan": true, "available_commands_update": true,
	"current_mode_update": true, "config_option_update": true, "session_info_update": true,
	"usage_update": true, "subagent_update": true, "session_message": true,
}

// checkFrame checks one output: JSON-valid, spec-only toward the client.
func checkFrame(t *testing.T, opts scenarioOpts, o proxy.Out) {
	t.Helper()
	if o.Op == "" {
		return // byte-identical to its input, checked by the caller
	}
	if !json.Valid(o.Frame) {
		t.Errorf("output is not valid JSON: %s", o.Frame)
		return
	}
	if o.To != pipe.Client {
		return
	}
	var msg struct {
		Method string `json:"method"`
		Params struct {
			Update struct {
				SessionUpdate string `json:"sessionUpdate"`
				Status        string `json:"status"`
			} `json:"update"`
		} `json:"params"`
	}
	_ = json.Unmarshal(o.Frame, &msg)
	m := strings.TrimPrefix(msg.Method, "_")
	if strings.HasPrefix(m, "cursor/") && !opts.forward() {
		t.Errorf("C1/C13: %s reached the client: %s", msg.Method, o.Frame)
	}
	if msg.Method == "session/update" {
		if u := msg.Params.Update.SessionUpdate; !standardUpdates[u] {
			t.Errorf("P3: sessionUpdate %q is not standard: %s", u, o.Frame)
		}
		switch msg.Params.Update.Status {
		case "", "pending", "in_progress", "completed", "failed":
		default:
			t.Errorf("P3: status %q is not standard: %s", msg.Params.Update.Status, o.Frame)
		}
	}
}

// TestGolden runs every scenario under testdata/golden/ and compares the output
// section byte for byte (-update rewrites it).
func TestGolden(t *testing.T) {
	schema := rewritetest.LoadSchema(t)
	rewritetest.RunGolden(t, filepath.Join("testdata", "golden", "*.txtar"), func(t *testing.T, c *rewritetest.Case) {
		input, ok := c.File("input.jsonl")
		if !ok {
			t.Fatal("no input.jsonl section")
		}
		c.Check(t, "output.jsonl", runScenario(t, schema, scenarioOptions(t, c.Comment()), input))
	})
}

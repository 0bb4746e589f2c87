package cursor_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/proxy"
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/rewrite/cursor"
	"github.com/acp-normalize/acp-normalize/rewrite/rewritetest"
)

// archive is a txtar archive: a comment and named files, in order.
type archive struct {
	comment []byte
	files   []archiveFile
}

type archiveFile struct {
	name string
	data []byte
}

// parseArchive reads the txtar format: "-- name --" lines start files.
func parseArchive(data []byte) *archive {
	a := &archive{}
	cur := &a.comment
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i+1], data[i+1:]
		} else {
			data = nil
		}
		t := bytes.TrimRight(line, "\r\n")
		if bytes.HasPrefix(t, []byte("-- ")) && bytes.HasSuffix(t, []byte(" --")) && len(t) >= 6 {
			a.files = append(a.files, archiveFile{name: string(t[3 : len(t)-3])})
			cur = &a.files[len(a.files)-1].data
			continue
		}
		*cur = append(*cur, line...)
	}
	return a
}

func (a *archive) format() []byte {
	var b bytes.Buffer
	b.Write(a.comment)
	for _, f := range a.files {
		fmt.Fprintf(&b, "-- %s --\n", f.name)
		b.Write(f.data)
	}
	return b.Bytes()
}

func (a *archive) file(name string) []byte {
	for _, f := range a.files {
		if f.name == name {
			return f.data
		}
	}
	return nil
}

func (a *archive) setFile(name string, data []byte) {
	for i := range a.files {
		if a.files[i].name == name {
			a.files[i].data = data
			return
		}
	}
	a.files = append(a.files, archiveFile{name: name, data: data})
}

// scenarioOptions reads "options: ..." lines of the comment.
func scenarioOptions(t *testing.T, comment []byte) cursor.Options {
	var o cursor.Options
	for _, line := range strings.Split(string(comment), "\n") {
		rest, ok := strings.CutPrefix(line, "options:")
		if !ok {
			continue
		}
		for _, w := range strings.Fields(rest) {
			switch {
			case w == "forward-unknown-vendor-methods":
				o.ForwardUnknownVendorMethods = true
			case w == "cursor-native-subagents":
				o.NativeSubagents = true
			case strings.HasPrefix(w, "cap="):
				n, err := strconv.Atoi(w[4:])
				if err != nil {
					t.Fatalf("bad option %q", w)
				}
				o.Cap = n
			default:
				t.Fatalf("unknown option %q", w)
			}
		}
	}
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
func runScenario(t *testing.T, opts cursor.Options, input []byte) []byte {
	t.Helper()
	r, err := proxy.NewRouter(proxy.RouterConfig{
		Modules: []rewrite.Module{cursor.Module(opts)},
		Logger:  slog.New(&failOnPanic{t: t}),
		Version: "test",
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
func checkFrame(t *testing.T, opts cursor.Options, o proxy.Out) {
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
	if strings.HasPrefix(m, "cursor/") && !opts.ForwardUnknownVendorMethods {
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

// failOnPanic is a slog handler that fails the test when a module
// panicked (the router recovers and fails open, which would hide it).
type failOnPanic struct {
	t     *testing.T
	attrs []slog.Attr
}

func (h *failOnPanic) Enabled(_ context.Context, _ slog.Level) bool { return true }

func (h *failOnPanic) Handle(_ context.Context, rec slog.Record) error {
	rec.Attrs(func(a slog.Attr) bool {
		if a.Key == "err" && strings.Contains(a.Value.String(), "panic") {
			h.t.Errorf("module panicked: %s", a.Value)
		}
		return true
	})
	return nil
}

func (h *failOnPanic) WithAttrs(as []slog.Attr) slog.Handler {
	return &failOnPanic{t: h.t, attrs: append(append([]slog.Attr(nil), h.attrs...), as...)}
}
func (h *failOnPanic) WithGroup(string) slog.Handler { return h }

// TestGolden runs every scenario under testdata/ and compares the output
// section byte for byte (-update rewrites it).
func TestGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no golden files")
	}
	for _, path := range files {
		name := strings.TrimSuffix(filepath.Base(path), ".txtar")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			a := parseArchive(data)
			input := a.file("input.jsonl")
			if input == nil {
				t.Fatal("no input.jsonl section")
			}
			got := runScenario(t, scenarioOptions(t, a.comment), input)
			if rewritetest.Updating() {
				a.setFile("output.jsonl", got)
				if err := os.WriteFile(path, a.format(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want := a.file("output.jsonl")
			if !bytes.Equal(got, want) {
				t.Errorf("output differs from %s (run with -update to accept):\n%s", path, lineDiff(want, got))
			}
		})
	}
}

// lineDiff shows the first differing lines.
func lineDiff(want, got []byte) string {
	w := strings.Split(string(want), "\n")
	g := strings.Split(string(got), "\n")
	for i := 0; i < max(len(w), len(g)); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return fmt.Sprintf("line %d:\nwant: %s\n got: %s", i+1, wl, gl)
		}
	}
	return "(same lines)"
}

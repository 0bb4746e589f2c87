package route

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/rewrite/rewritetest"
)

// dropModule drops every frame containing "x/drop" and answers a request
// among them with {} (a reply).
func dropModule() rewrite.Module {
	return rewritetest.FuncModule("drop", "test: drops x/drop", []string{`"x/drop"`}, func(f *rewrite.Frame) (rewrite.Verdict, error) {
		var v rewrite.Verdict
		v.DropFrame()
		if f.ID() != nil {
			reply, err := rewrite.Result(f.ID(), []byte(`{}`))
			if err != nil {
				return v, err
			}
			v.Send(f.From, reply)
		}
		return v, nil
	})
}

// stepLine renders a step compactly for comparison.
func stepLine(s *Step) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s@%d", s.Kind, s.Line)
	switch s.Kind {
	case StepFrame:
		fmt.Fprintf(&b, " %s:%s", s.From, s.In)
		if s.NonJSON {
			b.WriteString(" (non-JSON)")
		}
	case StepStderr, StepEvent:
		fmt.Fprintf(&b, " %s", s.Text)
	case StepError:
		fmt.Fprintf(&b, " %v", s.Err)
	}
	for _, o := range s.Outs {
		op := o.Op
		if op == "" {
			op = "forward"
		}
		fmt.Fprintf(&b, " | %s>%s %s", op, o.To, o.Frame)
	}
	return b.String()
}

func replayAll(t *testing.T, capture string, cfg RouterConfig) []string {
	t.Helper()
	var got []string
	err := Replay(strings.NewReader(capture), cfg, func(s *Step) error {
		got = append(got, stepLine(s))
		return nil
	})
	if err != nil {
		t.Fatalf("Replay: %v", err)
	}
	return got
}

func TestReplay(t *testing.T) {
	tests := []struct {
		name    string
		capture string
		cfg     RouterConfig
		want    []string
	}{
		{
			name: "R3_P1_untouched_frames_byte_exact",
			capture: `{"seq":1,"ts":"2026-11-29T10:00:00Z","from":"client","frame":{ "jsonrpc":"2.0" ,"id":7,"method":"session/prompt","params":{"x":1.50e1,"s":"\u00e9<&>"}}}` + "\n" +
				`{"from":"agent","frame":{"jsonrpc":"2.0","id":7,"result":{"stopReason":"end_turn"}}}` + "\n",
			want: []string{
				`frame@1 client:{ "jsonrpc":"2.0" ,"id":7,"method":"session/prompt","params":{"x":1.50e1,"s":"\u00e9<&>"}} | forward>agent { "jsonrpc":"2.0" ,"id":7,"method":"session/prompt","params":{"x":1.50e1,"s":"\u00e9<&>"}}`,
				`frame@2 agent:{"jsonrpc":"2.0","id":7,"result":{"stopReason":"end_turn"}} | forward>client {"jsonrpc":"2.0","id":7,"result":{"stopReason":"end_turn"}}`,
				`end@0`,
			},
		},
		{
			name: "R3_output_records_ignored_events_and_stderr_kept",
			capture: `{"seq":1,"event":"start","version":"0.1.0","agent":["a"],"modules":[]}` + "\n" +
				`{"seq":2,"from":"agent","stderr":"warming up"}` + "\n" +
				`{"seq":3,"from":"agent","frame":{"jsonrpc":"2.0","method":"n"}}` + "\n" +
				`{"seq":4,"re":3,"op":"replace","to":"client","frame":{"jsonrpc":"2.0","method":"recorded-output"}}` + "\n" +
				`{"seq":5,"re":3,"op":"drop","to":"client"}` + "\n",
			want: []string{
				`event@1 start`,
				`stderr@2 warming up`,
				`frame@3 agent:{"jsonrpc":"2.0","method":"n"} | forward>client {"jsonrpc":"2.0","method":"n"}`,
				`end@0`,
			},
		},
		{
			name: "R3_bad_lines_reported_with_line_numbers_rest_replayed",
			capture: `{"from":"agent","frame":{"jsonrpc":"2.0","method":"a"}}` + "\n" +
				"\n" +
				`not json at all` + "\n" +
				`{"from":"nobody","frame":{}}` + "\n" +
				`{"to":"client","frame":{"jsonrpc":"2.0","method":"a"}}` + "\n" +
				`{"from":"agent","frame":{"jsonrpc":"2.0","method":"b"}}` + "\n",
			want: []string{
				`frame@1 agent:{"jsonrpc":"2.0","method":"a"} | forward>client {"jsonrpc":"2.0","method":"a"}`,
				`error@3 not a capture record: invalid character 'o' in literal null (expecting 'u')`,
				`error@4 bad "from" "nobody"`,
				`error@5 replay output line, not a capture record`,
				`frame@6 agent:{"jsonrpc":"2.0","method":"b"} | forward>client {"jsonrpc":"2.0","method":"b"}`,
				`end@0`,
			},
		},
		{
			name: "R3_acpdbg_capture",
			capture: `{"ts":"2026-11-29T10:00:00.000Z","direction":"meta","frame":{"agent":"cursor"}}` + "\n" +
				`{"ts":"2026-11-29T10:00:00.001Z","direction":"sent","frame":{"jsonrpc":"2.0","id":1,"method":"session/new","params":{}}}` + "\n" +
				`{"ts":"2026-11-29T10:00:00.002Z","direction":"stderr","frame":"cursor: starting"}` + "\n" +
				`{"ts":"2026-11-29T10:00:00.003Z","direction":"received","frame":"Using worktree: /tmp/w"}` + "\n" +
				`{"ts":"2026-11-29T10:00:00.004Z","direction":"received","frame":{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s"}}}` + "\n",
			want: []string{
				`event@1 meta`,
				`frame@2 client:{"jsonrpc":"2.0","id":1,"method":"session/new","params":{}} | forward>agent {"jsonrpc":"2.0","id":1,"method":"session/new","params":{}}`,
				`stderr@3 cursor: starting`,
				`frame@4 agent:Using worktree: /tmp/w (non-JSON)`,
				`frame@5 agent:{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s"}} | forward>client {"jsonrpc":"2.0","id":1,"result":{"sessionId":"s"}}`,
				`end@0`,
			},
		},
		{
			name: "F2_non_json_forwarded_by_policy_raw_synonym",
			cfg:  RouterConfig{NonJSON: ForwardNonJSON},
			capture: `{"from":"agent","raw":"Using worktree: /tmp/w"}` + "\n" +
				`{"from":"agent","text":"{truncated"}` + "\n",
			want: []string{
				`frame@1 agent:Using worktree: /tmp/w (non-JSON) | forward>client Using worktree: /tmp/w`,
				`frame@2 agent:{truncated | forward>client {truncated`,
				`end@0`,
			},
		},
		{
			name: "modules_drop_and_reply",
			cfg:  RouterConfig{Modules: []rewrite.Module{dropModule()}},
			capture: `{"from":"agent","frame":{"jsonrpc":"2.0","id":0,"method":"x/drop"}}` + "\n" +
				`{"from":"agent","frame":{"jsonrpc":"2.0","method":"x/drop"}}` + "\n",
			want: []string{
				`frame@1 agent:{"jsonrpc":"2.0","id":0,"method":"x/drop"} | reply>agent {"jsonrpc":"2.0","id":0,"result":{}}`,
				`frame@2 agent:{"jsonrpc":"2.0","method":"x/drop"}`,
				`end@0`,
			},
		},
		{
			name: "M_initialize_advertised_F6_exit_answers_pending",
			cfg:  RouterConfig{Version: "9.9.9"},
			capture: `{"from":"client","frame":{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}}` + "\n" +
				`{"from":"agent","frame":{"jsonrpc":"2.0","id":0,"result":{"agentCapabilities":{}}}}` + "\n" +
				`{"from":"client","frame":{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{}}}` + "\n" +
				`{"event":"exit","code":3}` + "\n",
			want: []string{
				`frame@1 client:{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}} | forward>agent {"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`,
				`frame@2 agent:{"jsonrpc":"2.0","id":0,"result":{"agentCapabilities":{}}} | replace>client {"jsonrpc":"2.0","id":0,"result":{"agentCapabilities":{"_meta":{"acp-normalize":{"modules":[],"version":"9.9.9"}}}}}`,
				`frame@3 client:{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{}} | forward>agent {"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{}}`,
				`event@4 exit | reply>client {"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"agent exited"}}`,
			},
		},
		{
			// Live, an agent that exits while the client is connected ends
			// the connection with AgentGone only: the request the proxy
			// holds for the module is not cancelled (C12 is for the client
			// leaving), the client's open request gets -32603 (F6).
			name: "F6_agent_exits_first_no_cancelled_for_held_request",
			cfg:  RouterConfig{Modules: []rewrite.Module{rewritetest.Module()}},
			capture: `{"from":"client","frame":{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{}}}` + "\n" +
				`{"from":"agent","frame":{"jsonrpc":"2.0","id":9,"method":"test/ask","params":{"question":"Q?"}}}` + "\n" +
				`{"event":"exit","code":1}` + "\n",
			want: []string{
				`frame@1 client:{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{}} | forward>agent {"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{}}`,
				`frame@2 agent:{"jsonrpc":"2.0","id":9,"method":"test/ask","params":{"question":"Q?"}} | request>client {"jsonrpc":"2.0","id":"acp-normalize:1","method":"session/request_permission","params":{"sessionId":"sess-1","toolCall":{"toolCallId":"ask-1","title":"Q?"},"options":[{"optionId":"yes","name":"Yes","kind":"allow_once"},{"optionId":"no","name":"No","kind":"reject_once"}]}}`,
				`event@3 exit | reply>client {"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"agent exited"}}`,
			},
		},
		{
			// A forwarded signal gives the modules their last word where
			// the live proxy gave it (C12), before the agent exits.
			name: "C12_signal_event_gives_last_word_then_exit",
			cfg:  RouterConfig{Modules: []rewrite.Module{rewritetest.Module()}},
			capture: `{"from":"agent","frame":{"jsonrpc":"2.0","id":9,"method":"test/ask","params":{"question":"Q?"}}}` + "\n" +
				`{"event":"signal","signal":"terminated"}` + "\n" +
				`{"from":"agent","stderr":"bye"}` + "\n" +
				`{"event":"exit","code":143}` + "\n",
			want: []string{
				`frame@1 agent:{"jsonrpc":"2.0","id":9,"method":"test/ask","params":{"question":"Q?"}} | request>client {"jsonrpc":"2.0","id":"acp-normalize:1","method":"session/request_permission","params":{"sessionId":"sess-1","toolCall":{"toolCallId":"ask-1","title":"Q?"},"options":[{"optionId":"yes","name":"Yes","kind":"allow_once"},{"optionId":"no","name":"No","kind":"reject_once"}]}}`,
				`event@2 signal | emit>agent {"jsonrpc":"2.0","id":9,"result":{"outcome":{"outcome":"cancelled"}}}`,
				`stderr@3 bye`,
				`event@4 exit`,
			},
		},
		{
			name: "C12_client_gone_event_then_exit",
			cfg:  RouterConfig{Modules: []rewrite.Module{rewritetest.Module()}},
			capture: `{"from":"agent","frame":{"jsonrpc":"2.0","id":9,"method":"test/ask","params":{"question":"Q?"}}}` + "\n" +
				`{"event":"client-gone"}` + "\n" +
				`{"event":"exit","code":0}` + "\n",
			want: []string{
				`frame@1 agent:{"jsonrpc":"2.0","id":9,"method":"test/ask","params":{"question":"Q?"}} | request>client {"jsonrpc":"2.0","id":"acp-normalize:1","method":"session/request_permission","params":{"sessionId":"sess-1","toolCall":{"toolCallId":"ask-1","title":"Q?"},"options":[{"optionId":"yes","name":"Yes","kind":"allow_once"},{"optionId":"no","name":"No","kind":"reject_once"}]}}`,
				`event@2 client-gone | emit>agent {"jsonrpc":"2.0","id":9,"result":{"outcome":{"outcome":"cancelled"}}}`,
				`event@3 exit`,
			},
		},
		{
			name:    "C12_capture_cut_ends_with_client_gone",
			cfg:     RouterConfig{Modules: []rewrite.Module{rewritetest.Module()}},
			capture: `{"from":"agent","frame":{"jsonrpc":"2.0","id":9,"method":"test/ask","params":{"question":"Q?"}}}` + "\n",
			want: []string{
				`frame@1 agent:{"jsonrpc":"2.0","id":9,"method":"test/ask","params":{"question":"Q?"}} | request>client {"jsonrpc":"2.0","id":"acp-normalize:1","method":"session/request_permission","params":{"sessionId":"sess-1","toolCall":{"toolCallId":"ask-1","title":"Q?"},"options":[{"optionId":"yes","name":"Yes","kind":"allow_once"},{"optionId":"no","name":"No","kind":"reject_once"}]}}`,
				`end@0 | emit>agent {"jsonrpc":"2.0","id":9,"result":{"outcome":{"outcome":"cancelled"}}}`,
			},
		},
		{
			// The start event's token gives the replay the live session's
			// request ids, so the client's recorded answer is its own.
			name: "C12_recorded_id_token_reused",
			cfg:  RouterConfig{Modules: []rewrite.Module{rewritetest.Module()}},
			capture: `{"event":"start","idToken":"t1"}` + "\n" +
				`{"from":"agent","frame":{"jsonrpc":"2.0","id":9,"method":"test/ask","params":{"question":"Q?"}}}` + "\n" +
				`{"from":"client","frame":{"jsonrpc":"2.0","id":"acp-normalize:t1:1","result":{"outcome":{"outcome":"selected","optionId":"yes"}}}}` + "\n" +
				`{"event":"exit","code":0}` + "\n",
			want: []string{
				`event@1 start`,
				`frame@2 agent:{"jsonrpc":"2.0","id":9,"method":"test/ask","params":{"question":"Q?"}} | request>client {"jsonrpc":"2.0","id":"acp-normalize:t1:1","method":"session/request_permission","params":{"sessionId":"sess-1","toolCall":{"toolCallId":"ask-1","title":"Q?"},"options":[{"optionId":"yes","name":"Yes","kind":"allow_once"},{"optionId":"no","name":"No","kind":"reject_once"}]}}`,
				`frame@3 client:{"jsonrpc":"2.0","id":"acp-normalize:t1:1","result":{"outcome":{"outcome":"selected","optionId":"yes"}}} | emit>agent {"jsonrpc":"2.0","id":9,"result":{"outcome":{"outcome":"answered"}}}`,
				`event@4 exit`,
			},
		},
		{
			name:    "empty_capture",
			capture: "",
			want:    []string{`end@0`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := replayAll(t, tt.capture, tt.cfg)
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("steps:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// TestReplayStepsOwnTheirBytes: a step kept after its callback still
// holds its frames (the router reuses its buffers).
func TestReplayStepsOwnTheirBytes(t *testing.T) {
	capture := strings.Repeat(`{"from":"agent","frame":{"jsonrpc":"2.0","method":"n","params":{"i":1}}}`+"\n", 3)
	var kept []*Step
	if err := Replay(strings.NewReader(capture), RouterConfig{}, func(s *Step) error {
		kept = append(kept, s)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for i, s := range kept[:3] {
		if !bytes.Equal(s.Outs[0].Frame, s.In) || string(s.In) != `{"jsonrpc":"2.0","method":"n","params":{"i":1}}` {
			t.Errorf("step %d: in %s out %s", i, s.In, s.Outs[0].Frame)
		}
	}
}

// TestReplayCallbackErrorStops: the first error of the callback ends
// the replay and is returned.
func TestReplayCallbackErrorStops(t *testing.T) {
	stop := errors.New("stop")
	n := 0
	err := Replay(strings.NewReader(strings.Repeat(`{"from":"agent","frame":{}}`+"\n", 5)), RouterConfig{}, func(*Step) error {
		n++
		return stop
	})
	if !errors.Is(err, stop) || n != 1 {
		t.Fatalf("err %v after %d steps, want stop after 1", err, n)
	}
}

func TestStepDeliveredChanged(t *testing.T) {
	tests := []struct {
		name               string
		step               Step
		delivered, changed bool
	}{
		{"forwarded", Step{Kind: StepFrame, Outs: []Out{{To: pipe.Client, Re: 1}}}, true, false},
		{"replaced", Step{Kind: StepFrame, Outs: []Out{{To: pipe.Client, Op: pipe.OpReplace, Re: 1}}}, true, true},
		{"dropped", Step{Kind: StepFrame}, false, true},
		{"dropped_with_reply", Step{Kind: StepFrame, Outs: []Out{{To: pipe.Agent, Op: pipe.OpReply, Re: 1}}}, false, true},
		{"forwarded_with_emit", Step{Kind: StepFrame, Outs: []Out{{To: pipe.Client, Re: 1}, {To: pipe.Client, Op: pipe.OpEmit, Re: 1}}}, true, true},
		{"stderr", Step{Kind: StepStderr}, false, false},
		{"end_with_replies", Step{Kind: StepEnd, Outs: []Out{{To: pipe.Client, Op: pipe.OpReply}}}, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.step.Delivered(); got != tt.delivered {
				t.Errorf("Delivered() = %v", got)
			}
			if got := tt.step.Changed(); got != tt.changed {
				t.Errorf("Changed() = %v", got)
			}
		})
	}
}

// FuzzCaptureReader feeds arbitrary captures to the capture reader through
// Replay: it never panics, reports bad lines with increasing line numbers
// and, with no modules, forwards every JSON input frame byte for byte (P1).
func FuzzCaptureReader(f *testing.F) {
	for _, seed := range []string{
		`{"seq":1,"ts":"2026-11-29T10:00:00Z","from":"client","frame":{"jsonrpc":"2.0","id":1,"method":"m"}}` + "\n",
		`{"from":"agent","raw":"x"}` + "\n" + `{"from":"agent","stderr":"e"}` + "\n",
		`{"direction":"received","frame":"text"}` + "\n" + `{"direction":"meta","frame":{}}` + "\n",
		`{"re":1,"op":"drop","to":"client"}` + "\n" + `{"event":"exit","code":0}` + "\n",
		"\xef\xbb\xbf{\"from\":\"agent\",\"frame\":[1,2]}\r\n\n{bad\n",
		`{"from":"agent","frame":null}` + "\n" + `{"to":"x"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		lastLine := 0
		err := Replay(bytes.NewReader(data), RouterConfig{NonJSON: ForwardNonJSON}, func(s *Step) error {
			if s.Kind == StepEnd {
				return nil
			}
			if s.Line <= lastLine {
				t.Fatalf("line %d after line %d", s.Line, lastLine)
			}
			lastLine = s.Line
			switch s.Kind {
			case StepError:
				if s.Err == nil {
					t.Fatal("error step without an error")
				}
			case StepFrame:
				if s.From != pipe.Client && s.From != pipe.Agent {
					t.Fatalf("frame from %v", s.From)
				}
				if len(s.Outs) > 0 && s.Outs[0].Op == "" && !bytes.Equal(s.Outs[0].Frame, s.In) {
					t.Fatalf("forwarded %q, input %q", s.Outs[0].Frame, s.In)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatalf("Replay of an in-memory capture failed: %v", err)
		}
	})
}

// TestReplayWithStartSettings: ReplayWith hands the capture's start event
// (with its recorded settings) to configure before the first frame, and
// nil to a capture that does not begin with one; the router it returns
// is the one the frames go through.
func TestReplayWithStartSettings(t *testing.T) {
	tests := []struct {
		name, capture string
		want          string // the start configure saw
		out           string // what the non-JSON line became
	}{
		{"start_event_settings",
			`{"seq":1,"event":"start","version":"0.1.0","agent":["a"],"modules":["cursor"],"nonJSON":"forward","options":["cursor-native-subagents"]}` + "\n" +
				`{"seq":2,"from":"agent","text":"hello"}` + "\n",
			`modules [cursor] policy forward options [cursor-native-subagents]`, `forward>client hello`},
		{"no_start_event",
			`{"from":"agent","text":"hello"}` + "\n",
			`nil`, ``},
		{"bad_line_before_start",
			`{oops` + "\n" + `{"event":"start","nonJSON":"drop"}` + "\n" + `{"from":"agent","text":"hello"}` + "\n",
			`modules [] policy drop options []`, ``},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var saw []string
			var out string
			err := ReplayWith(strings.NewReader(tt.capture), func(start *Step) (RouterConfig, error) {
				if start == nil {
					saw = append(saw, "nil")
					return RouterConfig{}, nil
				}
				saw = append(saw, fmt.Sprintf("modules %v policy %s options %v", start.Modules, start.Policy, start.Options))
				policy := DropNonJSON
				if start.Policy == "forward" {
					policy = ForwardNonJSON
				}
				return RouterConfig{NonJSON: policy}, nil
			}, func(s *Step) error {
				if s.Kind == StepFrame {
					line := stepLine(s)
					if i := strings.Index(line, " | "); i >= 0 {
						out = line[i+3:]
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(saw, ";") != tt.want || out != tt.out {
				t.Errorf("configure saw %q, line became %q; want %q, %q", saw, out, tt.want, tt.out)
			}
		})
	}
}

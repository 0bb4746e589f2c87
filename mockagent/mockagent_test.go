package mockagent

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
	"github.com/acp-normalize/acp-normalize/pipe"
)

// lines joins capture lines.
func lines(ls ...string) string { return strings.Join(ls, "\n") + "\n" }

func client(frame string) string { return `{"from":"client","frame":` + frame + `}` }
func agent(frame string) string  { return `{"from":"agent","frame":` + frame + `}` }

// session is a recorded session: initialize, a notification after it,
// session/new, a prompt turn with a permission request and a chunk.
var session = lines(
	client(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`),
	agent(`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}`),
	agent(`{"jsonrpc":"2.0","method":"_auth/status","params":{}}`),
	client(`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/w"}}`),
	`{"from":"agent","stderr":"session created"}`,
	agent(`{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s"}}`),
	agent(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"available_commands_update","availableCommands":[]}}}`),
	client(`{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s","prompt":[]}}`),
	agent(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}}`),
	agent(`{"jsonrpc":"2.0","id":0,"method":"session/request_permission","params":{"sessionId":"s"}}`),
	client(`{"jsonrpc":"2.0","id":0,"result":{"outcome":{"outcome":"selected","optionId":"allow"}}}`),
	agent(`{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}`),
)

func TestServe(t *testing.T) {
	tests := []struct {
		name    string
		capture string
		// live is what the client sends; want[0] is written before the
		// first client frame, want[i] after the i-th.
		live       []string
		want       [][]string
		wantStderr string
	}{
		{
			name:    "answers_in_order_ids_remapped_notifications_in_place",
			capture: session,
			live: []string{
				`{"jsonrpc":"2.0","id":"i","method":"initialize","params":{}}`,
				`{"jsonrpc":"2.0","id":10,"method":"session/new","params":{}}`,
				`{"jsonrpc":"2.0","id":11,"method":"session/prompt","params":{}}`,
				`{"jsonrpc":"2.0","id":0,"result":{"outcome":{"outcome":"cancelled"}}}`,
				`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}`,
			},
			want: [][]string{
				nil,
				{`{"jsonrpc":"2.0","id":"i","result":{"protocolVersion":1}}`, `{"jsonrpc":"2.0","method":"_auth/status","params":{}}`},
				{`{"jsonrpc":"2.0","id":10,"result":{"sessionId":"s"}}`, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"available_commands_update","availableCommands":[]}}}`},
				{
					`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}}`,
					`{"jsonrpc":"2.0","id":0,"method":"session/request_permission","params":{"sessionId":"s"}}`,
				},
				// The prompt's result was recorded after the client's
				// answer to the permission request: it waits for it.
				{`{"jsonrpc":"2.0","id":11,"result":{"stopReason":"end_turn"}}`},
				nil,
			},
			wantStderr: "session created\n",
		},
		{
			name: "frames_before_any_request_written_at_start_non_json_skipped",
			capture: lines(
				`{"from":"agent","text":"Using worktree: /w"}`,
				agent(`{"jsonrpc":"2.0","method":"hello"}`),
				client(`{"jsonrpc":"2.0","id":0,"method":"initialize"}`),
				agent(`{"jsonrpc":"2.0","id":0,"result":{}}`),
			),
			live: []string{`{"jsonrpc":"2.0","id":0,"method":"initialize"}`},
			want: [][]string{
				{`{"jsonrpc":"2.0","method":"hello"}`},
				{`{"jsonrpc":"2.0","id":0,"result":{}}`},
			},
		},
		{
			name:    "unknown_method_gets_-32601_exhausted_method_-32603",
			capture: session,
			live: []string{
				`{"jsonrpc":"2.0","id":1,"method":"session/list","params":{}}`,
				`{"jsonrpc":"2.0","id":2,"method":"initialize","params":{}}`,
				`{"jsonrpc":"2.0","id":3,"method":"initialize","params":{}}`,
			},
			want: [][]string{
				nil,
				{`{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found: session/list (mock-agent: not in the capture)"}}`},
				{`{"jsonrpc":"2.0","id":2,"result":{"protocolVersion":1}}`, `{"jsonrpc":"2.0","method":"_auth/status","params":{}}`},
				{`{"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"mock-agent: the capture has only 1 initialize response(s)"}}`},
			},
		},
		{
			name:    "skipped_recorded_request_never_blocks_its_response_waits",
			capture: session,
			live: []string{
				`{"jsonrpc":"2.0","id":"p","method":"session/prompt","params":{}}`,
				`{"jsonrpc":"2.0","id":"n","method":"session/new","params":{}}`,
				`{"jsonrpc":"2.0","id":"i","method":"initialize","params":{}}`,
			},
			want: [][]string{
				nil,
				{
					`{"jsonrpc":"2.0","method":"_auth/status","params":{}}`,
					`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"available_commands_update","availableCommands":[]}}}`,
					`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}}`,
					`{"jsonrpc":"2.0","id":0,"method":"session/request_permission","params":{"sessionId":"s"}}`,
				},
				// The prompt's result waited for the permission answer;
				// the client's next request releases it (it never hangs).
				{`{"jsonrpc":"2.0","id":"n","result":{"sessionId":"s"}}`, `{"jsonrpc":"2.0","id":"p","result":{"stopReason":"end_turn"}}`},
				{`{"jsonrpc":"2.0","id":"i","result":{"protocolVersion":1}}`},
			},
			wantStderr: "session created\n",
		},
		{
			name: "capture_ends_before_the_response_-32603_after_its_frames",
			capture: lines(
				client(`{"jsonrpc":"2.0","id":5,"method":"session/prompt","params":{}}`),
				agent(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"cut"}}}}`),
				`{"event":"exit","code":1}`,
			),
			live: []string{`{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{}}`},
			want: [][]string{
				nil,
				{
					`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"cut"}}}}`,
					`{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"mock-agent: the capture has no response to this session/prompt"}}`,
				},
			},
		},
		{
			name: "id_replaced_every_other_byte_kept",
			capture: lines(
				client(`{"jsonrpc":"2.0","id":0,"method":"m"}`),
				agent(`{ "jsonrpc" : "2.0" , "id" : 0 , "result" : { "a" : 1.0e0 , "s" : "\u00e9" } }`),
			),
			live: []string{`{"jsonrpc":"2.0","id":"live-1","method":"m"}`},
			want: [][]string{
				nil,
				{`{ "jsonrpc" : "2.0" , "id" : "live-1" , "result" : { "a" : 1.0e0 , "s" : "\u00e9" } }`},
			},
		},
		{
			name: "acpdbg_capture",
			capture: lines(
				`{"ts":"2026-11-29T10:00:00Z","direction":"sent","frame":{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}}`,
				`{"ts":"2026-11-29T10:00:01Z","direction":"received","frame":{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1}}}`,
				`{"ts":"2026-11-29T10:00:01Z","direction":"stderr","frame":"ready"}`,
			),
			live: []string{`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`},
			want: [][]string{
				nil,
				{`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}`},
			},
			wantStderr: "ready\n",
		},
		{
			// A notification (session/cancel) releases frames waiting
			// for an answer as well; an answer to another id does not.
			name:    "waiting_for_an_answer_released_by_a_notification",
			capture: session,
			live: []string{
				`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`,
				`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{}}`,
				`{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{}}`,
				`{"jsonrpc":"2.0","id":7,"result":{}}`,
				`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}`,
			},
			want: [][]string{
				nil,
				{`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}`, `{"jsonrpc":"2.0","method":"_auth/status","params":{}}`},
				{`{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s"}}`, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"available_commands_update","availableCommands":[]}}}`},
				{
					`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}}`,
					`{"jsonrpc":"2.0","id":0,"method":"session/request_permission","params":{"sessionId":"s"}}`,
				},
				nil,
				{`{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}`},
			},
			wantStderr: "session created\n",
		},
		{
			// A non-JSON line is no request; a malformed request is
			// answered (JSON-RPC 2.0), never left waiting.
			name:    "non_json_ignored_malformed_requests_answered",
			capture: session,
			live: []string{
				`not json`,
				`{"jsonrpc":"2.0"}`,
				`{"jsonrpc":"2.0","id":3,"method":7}`,
				`{"jsonrpc":"2.0","id":{"x":1},"method":"initialize"}`,
				`{"jsonrpc":"2.0","id":"a","method":"session/new",`,
			},
			want: [][]string{nil, nil,
				{`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request"}}`},
				{`{"jsonrpc":"2.0","id":3,"error":{"code":-32600,"message":"Invalid Request"}}`},
				{`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: id must be a string, a number or null"}}`},
				{`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`},
			},
		},
		{
			name:    "batches_answered_per_request_or_once",
			capture: session,
			live: []string{
				`[{"jsonrpc":"2.0","id":1,"method":"session/new","params":{}},{"jsonrpc":"2.0","method":"n"},{"jsonrpc":"2.0","id":"r","result":{}},7,{"jsonrpc":"2.0","id":2,"method":false}]`,
				`[]`,
				`[{"jsonrpc":"2.0","id":1,"method"`,
				`[{"jsonrpc":"2.0","method":"n"}]`,
			},
			want: [][]string{nil,
				{`[{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"Invalid Request: batches are not served"}},{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request"}},{"jsonrpc":"2.0","id":2,"error":{"code":-32600,"message":"Invalid Request"}}]`},
				{`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request"}}`},
				{`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request"}}`},
				nil,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkServe(t, tt.capture, tt.live, tt.want, tt.wantStderr)
		})
	}
}

// checkServe serves capture to the client frames live and checks what is
// written: want[0] before the first client frame, want[i] after the i-th.
func checkServe(t *testing.T, capture string, live []string, want [][]string, wantStderr string) {
	t.Helper()
	s, bad, err := Load(strings.NewReader(capture), nil)
	if err != nil || len(bad) > 0 {
		t.Fatalf("Load: %v %v", err, bad)
	}
	var out, stderr bytes.Buffer
	sv := newServer(s, Config{Stdout: &out, Stderr: &stderr})
	var got [][]string
	take := func() {
		_ = sv.w.Flush()
		var ls []string
		for _, l := range strings.Split(out.String(), "\n") {
			if l != "" {
				ls = append(ls, l)
			}
		}
		got = append(got, ls)
		out.Reset()
	}
	sv.pump(-1)
	take()
	for _, f := range live {
		sv.handle([]byte(f))
		take()
	}
	if len(got) != len(want) {
		t.Fatalf("got %d batches, want %d: %q", len(got), len(want), got)
	}
	for i := range got {
		if strings.Join(got[i], "\n") != strings.Join(want[i], "\n") {
			t.Errorf("after client frame %d:\n%s\nwant:\n%s", i, strings.Join(got[i], "\n"), strings.Join(want[i], "\n"))
		}
	}
	if stderr.String() != wantStderr {
		t.Errorf("stderr %q, want %q", stderr.String(), wantStderr)
	}
}

// TestServeEOF: Serve answers a whole client stream and returns nil at
// its EOF; only frames are written to stdout.
func TestServeEOF(t *testing.T) {
	s, _, err := Load(strings.NewReader(session), nil)
	if err != nil {
		t.Fatal(err)
	}
	in := strings.NewReader(lines(
		`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`,
		`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{}}`,
	))
	var out bytes.Buffer
	if err := Serve(s, Config{Stdin: in, Stdout: &out}); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	r := pipe.NewReader(&out)
	n := 0
	for {
		f, err := r.ReadFrame()
		if err != nil {
			break
		}
		if env := pipe.Peek(f); env.Kind == pipe.Invalid || env.Kind == pipe.NotJSON {
			t.Errorf("stdout line is no frame: %s", f)
		}
		n++
	}
	if n != 4 {
		t.Errorf("%d frames written, want 4:\n%s", n, out.String())
	}
}

// TestLoadBadLines: unreadable lines are reported with their numbers and
// the rest is loaded.
func TestLoadBadLines(t *testing.T) {
	s, bad, err := Load(strings.NewReader(lines(
		client(`{"jsonrpc":"2.0","id":0,"method":"initialize"}`),
		`{oops`,
		agent(`{"jsonrpc":"2.0","id":0,"result":{}}`),
		`{"from":"moon","frame":{}}`,
	)), nil)
	if err != nil {
		t.Fatal(err)
	}
	var lines []int
	for _, b := range bad {
		var le *LineError
		if !errors.As(b, &le) {
			t.Fatalf("bad line error %T", b)
		}
		lines = append(lines, le.Line)
	}
	if len(lines) != 2 || lines[0] != 2 || lines[1] != 4 {
		t.Errorf("bad lines %v, want [2 4]", lines)
	}
	if s.Requests() != 1 || s.Frames() != 1 {
		t.Errorf("script: %d requests, %d frames; want 1 and 1", s.Requests(), s.Frames())
	}
}

// TestServeAnswersWhileNextFrameIsPartial: a client that has sent one
// request and half of the next gets the first answer at once; the mock
// flushes before every read of the client, not only when its buffer is
// empty.
func TestServeAnswersWhileNextFrameIsPartial(t *testing.T) {
	s, _, err := Load(strings.NewReader(session), nil)
	if err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- Serve(s, Config{Stdin: inR, Stdout: outW}) }()
	go func() {
		// One write: a whole request, then the start of the next frame.
		_, _ = inW.Write([]byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}` + "\n" + `{"jsonrpc":"2.0","id":1,`))
	}()
	got := make(chan string, 1)
	go func() {
		f, err := pipe.NewReader(outR).ReadFrame()
		if err != nil {
			got <- "error: " + err.Error()
			return
		}
		got <- string(f)
	}()
	select {
	case f := <-got:
		if want := `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}`; f != want {
			t.Errorf("first frame %s, want %s", f, want)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no answer while the next frame is half sent: the response is held in the writer")
	}
	_ = inW.Close()
	go func() { _, _ = io.Copy(io.Discard, outR) }()
	if err := <-done; err != nil {
		t.Errorf("Serve: %v", err)
	}
}

// FuzzServe feeds arbitrary client streams to the mock agent serving a
// recorded session: it never panics, writes only JSON frames, and
// answers every request (valid or not) once the client has sent a frame
// after it, since nothing waits longer than the client's next frame.
func FuzzServe(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":0,"method":"initialize"}` + "\n" + `{"jsonrpc":"2.0","id":3,"method":7}` + "\n"))
	f.Add([]byte(`[{"jsonrpc":"2.0","id":1,"method":"session/new"},1]` + "\n" + `[]` + "\n" + `{"id":{},"method":"x"}` + "\n"))
	f.Add([]byte(`{"jsonrpc":"2.0","id":2,"method":"session/prompt"}` + "\n" + `{"jsonrpc":"2.0","id":0,"result":{}}` + "\n"))
	f.Add([]byte(`{"jsonrpc":"2.0","id":0,"method":"initialize"}` + "\n" + `{"jsonrpc":"2.0","id":1,"method":"session/load","params":{"sessionId":"s1"}}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"session/load","params":{"sessionId":"x"}}` + "\n" + `{"jsonrpc":"2.0","id":3,"method":"session/load","params":{"sessionId":[]}}` + "\n"))
	// The second capture's agent advertises loadSession: loads are served.
	var scripts []*Script
	for _, c := range []string{session, twoSessions(initLoadable)} {
		s, bad, err := Load(strings.NewReader(c), nil)
		if err != nil || len(bad) > 0 {
			f.Fatalf("Load: %v %v", err, bad)
		}
		scripts = append(scripts, s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, s := range scripts {
			serveChecked(t, s, data)
		}
	})
}

// serveChecked serves data to s and fails if a request is not answered
// exactly once or a malformed frame is not answered as JSON-RPC says.
func serveChecked(t *testing.T, s *Script, data []byte) {
	// A final notification releases anything waiting for an answer.
	in := append(bytes.Clone(data), "\n"+`{"jsonrpc":"2.0","method":"fuzz/end"}`+"\n"...)
	var out bytes.Buffer
	if err := Serve(s, Config{Stdin: bytes.NewReader(in), Stdout: &out}); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	// answers counts the answers by id; malformedOut the answers to
	// malformed frames (-32600, -32700, or a batch's array).
	answers := map[string]int{}
	malformedOut := 0
	r := pipe.NewReader(&out)
	for {
		frame, err := r.ReadFrame()
		if err != nil {
			break
		}
		if !json.Valid(frame) {
			t.Fatalf("written frame is not JSON: %q", frame)
		}
		env := pipe.Peek(frame)
		switch {
		case env.Kind == pipe.Batch, bytes.Contains(frame, []byte(`"code":-32600`)), bytes.Contains(frame, []byte(`"code":-32700`)):
			malformedOut++
		case env.Kind == pipe.Response:
			answers[string(env.ID)]++
		}
	}
	malformedIn := 0
	cr := pipe.NewReader(bytes.NewReader(in))
	for {
		frame, err := cr.ReadFrame()
		if err != nil {
			break
		}
		env := pipe.Peek(frame)
		switch {
		case env.Kind == pipe.Request && validID(env.ID):
			if answers[string(env.ID)] == 0 {
				t.Fatalf("request %s never answered:\nin:\n%s\nout:\n%s", frame, in, out.String())
			}
			answers[string(env.ID)]--
		case env.Kind == pipe.Request, env.Kind == pipe.Invalid:
			malformedIn++
		case env.Kind == pipe.Batch && !onlyNotificationsAndResponses(frame):
			malformedIn++
		}
	}
	if malformedOut != malformedIn {
		t.Fatalf("%d malformed frames, %d answers to them:\nin:\n%s\nout:\n%s", malformedIn, malformedOut, in, out.String())
	}
}

// onlyNotificationsAndResponses reports whether a batch holds at least
// one element and only notifications and responses.
func onlyNotificationsAndResponses(batch []byte) bool {
	n, other := 0, false
	err := rawjson.Elements(batch, func(el []byte) bool {
		n++
		k := pipe.Peek(el).Kind
		other = other || (k != pipe.Notification && k != pipe.Response)
		return true
	})
	return err == nil && n > 0 && !other
}

//go:build unix

package proxy

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/rewrite/rewritetest"
	"github.com/acp-normalize/acp-normalize/route"
)

// conductorPeer plays a conductor against Run in component mode (no
// agent command): it writes the conductor's frames to the component's
// stdin and reads what the component writes, one line at a time.
type conductorPeer struct {
	t       *testing.T
	in      *io.PipeWriter
	out     *bufio.Reader
	capture *bytes.Buffer
	done    chan struct{}
	code    int
	err     error
}

func startComponent(t *testing.T, argv []string) *conductorPeer {
	return startComponentRecording(t, argv, true)
}

// startComponentRecording is startComponent, recording into p.capture
// when record is set.
func startComponentRecording(t *testing.T, argv []string, record bool) *conductorPeer {
	t.Helper()
	p := newConductorPeer(t)
	cfg := Config{Argv: argv, AgentStderr: io.Discard,
		Router: route.RouterConfig{Modules: []rewrite.Module{rewritetest.Module()}, Version: "t", IDToken: "tok"}}
	if record {
		cfg.Router.Capture = pipe.NewCaptureWriter(p.capture, false)
	}
	p.run(cfg)
	return p
}

// startComponentStderr is startComponent with no module and the agent's
// stderr kept.
func startComponentStderr(t *testing.T, argv []string, stderr io.Writer) *conductorPeer {
	t.Helper()
	p := newConductorPeer(t)
	p.run(Config{Argv: argv, AgentStderr: stderr, Router: route.RouterConfig{Version: "t"}})
	return p
}

func newConductorPeer(t *testing.T) *conductorPeer {
	return &conductorPeer{t: t, capture: &bytes.Buffer{}, done: make(chan struct{})}
}

// run starts Run with cfg between the peer's pipes (cfg's Stdin, Stdout,
// KillGrace and Logger are the peer's) and, when the test ends, closes
// the conductor's side and waits for Run.
func (p *conductorPeer) run(cfg Config) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	p.in, p.out = inW, bufio.NewReader(outR)
	cfg.Stdin, cfg.Stdout = inR, outW
	cfg.KillGrace = 5 * time.Second
	cfg.Logger = slog.New(slog.DiscardHandler)
	go func() {
		defer close(p.done)
		p.code, p.err = Run(cfg)
		if c := cfg.Router.Capture; c != nil {
			_ = c.Close()
		}
		_ = outW.Close()
	}()
	p.t.Cleanup(func() {
		_ = inW.Close()
		_, _ = io.Copy(io.Discard, outR)
		<-p.done
	})
}

func (p *conductorPeer) send(frame string) {
	p.t.Helper()
	if _, err := io.WriteString(p.in, frame+"\n"); err != nil {
		p.t.Fatalf("writing to the component: %v", err)
	}
}

// sendAsync writes frame from a goroutine of its own, for a frame larger
// than the pipe takes before the test reads the other end, and returns
// the channel its write error arrives on: the test goroutine checks it,
// since t.Fatalf ends only the goroutine it is called from.
func (p *conductorPeer) sendAsync(frame string) <-chan error {
	errc := make(chan error, 1)
	go func() {
		_, err := io.WriteString(p.in, frame+"\n")
		errc <- err
	}()
	return errc
}

// expect reads the component's next line and compares it byte for byte.
func (p *conductorPeer) expect(want string) {
	p.t.Helper()
	got, err := p.out.ReadString('\n')
	if err != nil {
		p.t.Fatalf("reading from the component: %v (got %q, want %s)", err, got, want)
	}
	if got = strings.TrimSuffix(got, "\n"); got != want {
		p.t.Fatalf("component wrote\n  %s\nwant\n  %s", got, want)
	}
}

// end closes the conductor's stream and returns what else the component
// wrote, its exit code and error.
func (p *conductorPeer) end() (string, int, error) {
	p.t.Helper()
	_ = p.in.Close()
	rest, _ := io.ReadAll(p.out)
	<-p.done
	return string(rest), p.code, p.err
}

const (
	tsInit       = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{},"_meta":{"proxy":true}}}`
	tsInitAnswer = `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"agentCapabilities":{},"agentInfo":{"name":"x"}}}`
)

// handshake runs the TypeScript conductor's initialize through the
// component and checks both legs exactly.
func (p *conductorPeer) handshake() {
	p.t.Helper()
	// K1: the initialize goes to the successor wrapped, params as sent.
	p.send(tsInit)
	p.expect(`{"jsonrpc":"2.0","id":1,"method":"_proxy/successor/request","params":{"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{},"_meta":{"proxy":true}}}}`)
	// K1: the answer echoes _meta.proxy; rule M still advertises.
	p.send(tsInitAnswer)
	p.expect(`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"agentCapabilities":{"_meta":{"acp-normalize":{"modules":["test"],"version":"t"}}},"agentInfo":{"name":"x"},"_meta":{"proxy":true}}}`)
}

// K1 and K2 with the TypeScript conductor's envelope: the handshake, the
// wrapped frames both ways with their inner bytes unchanged, the proxy's
// own request ids (C12) apart from the conductor's, and the responses to
// wrapped requests told apart from the client side's by id.
func TestK1K2ComponentTypeScriptConductor(t *testing.T) {
	t.Parallel()
	p := startComponent(t, nil)

	p.handshake()

	// K2: a wrapped request from the successor reaches the client side
	// unwrapped, its params' bytes (spacing, key order) unchanged.
	p.send(`{"jsonrpc":"2.0","id":2,"method":"_proxy/successor/request","params":{"method":"fs/read_text_file","params":{"path" : "/a",  "sessionId":"s"}}}`)
	p.expect(`{"jsonrpc":"2.0","id":2,"method":"fs/read_text_file","params":{"path" : "/a",  "sessionId":"s"}}`)
	// The client side's answer goes back plain, to the wrapper's id.
	p.send(`{"jsonrpc":"2.0","id":2,"result":{"content":"x"}}`)
	p.expect(`{"jsonrpc":"2.0","id":2,"result":{"content":"x"}}`)

	// K2: a client request goes to the successor wrapped.
	p.send(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s","prompt":[ ]}}`)
	p.expect(`{"jsonrpc":"2.0","id":3,"method":"_proxy/successor/request","params":{"method":"session/prompt","params":{"sessionId":"s","prompt":[ ]}}}`)

	// K2: modules see the unwrapped frame: the test module names the call.
	p.send(`{"jsonrpc":"2.0","method":"_proxy/successor/notification","params":{"method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"t1","rawInput":{"_toolName":"task"}}}}}`)
	p.expect(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"t1","rawInput":{"_toolName":"task"},"name":"task"}}}`)

	// C12 in a pipeline: the module's own request to the client side
	// carries the proxy's id; its answer becomes the reply to the
	// successor's wrapped request, under the wrapper's id.
	p.send(`{"jsonrpc":"2.0","id":4,"method":"_proxy/successor/request","params":{"method":"test/ask","params":{"question":"ok?"}}}`)
	p.expect(`{"jsonrpc":"2.0","id":"acp-normalize:tok:1","method":"session/request_permission","params":{"sessionId":"sess-1","toolCall":{"toolCallId":"ask-1","title":"ok?"},"options":[{"optionId":"yes","name":"Yes","kind":"allow_once"},{"optionId":"no","name":"No","kind":"reject_once"}]}}`)
	p.send(`{"jsonrpc":"2.0","id":"acp-normalize:tok:1","result":{"outcome":{"outcome":"selected","optionId":"yes"}}}`)
	p.expect(`{"jsonrpc":"2.0","id":4,"result":{"outcome":{"outcome":"answered"}}}`)

	// The successor's answer to the wrapped prompt reaches the client.
	p.send(`{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}`)
	p.expect(`{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}`)

	// A client notification goes to the successor wrapped.
	p.send(`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}`)
	p.expect(`{"jsonrpc":"2.0","method":"_proxy/successor/notification","params":{"method":"session/cancel","params":{"sessionId":"s"}}}`)

	rest, code, err := p.end()
	// Had the answer to id 3 been taken for the client side's, the
	// prompt would still be open and get -32603 now (F6).
	if rest != "" || code != 0 || err != nil {
		t.Fatalf("at the conductor's EOF: wrote %q, exit %d, err %v; want nothing, 0, nil", rest, code, err)
	}
	// The capture holds the unwrapped frames, each from its side (K2);
	// the link marks the successor's initialize answer as it arrives.
	recs := captureInputs(t, p.capture.Bytes())
	want := []string{
		"client " + tsInit,
		`agent {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"agentCapabilities":{},"agentInfo":{"name":"x"},"_meta":{"proxy":true}}}`,
		`agent {"jsonrpc":"2.0","id":2,"method":"fs/read_text_file","params":{"path" : "/a",  "sessionId":"s"}}`,
		`client {"jsonrpc":"2.0","id":2,"result":{"content":"x"}}`,
	}
	for i, w := range want {
		if i >= len(recs) || recs[i] != w {
			t.Fatalf("capture input %d = %q, want %q (all: %q)", i, at(recs, i), w, recs)
		}
	}
	if !bytes.Contains(p.capture.Bytes(), []byte(`"event":"start"`)) || !bytes.Contains(p.capture.Bytes(), []byte(`"component":true`)) {
		t.Fatalf("start event without component:true:\n%s", p.capture.Bytes())
	}
	if !slices.Contains(recs, `agent {"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}`) {
		t.Fatalf("the successor's answer to the prompt is not recorded from the agent side: %q", recs)
	}
}

// K1 with the Rust conductor's methods: proxy/initialize reaches the
// successor as an initialize through proxy/successor, and its answer
// answers proxy/initialize; $/cancel_request is hop-local. The shapes
// are checked against the schema in TestK1ComponentRustConductorShapes
// (cmd/acp-normalize), which can load it.
func TestK1K2ComponentRustConductor(t *testing.T) {
	t.Parallel()
	p := startComponent(t, nil)
	p.send(`{"jsonrpc":"2.0","id":0,"method":"proxy/initialize","params":{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":true}}}}`)
	p.expect(`{"jsonrpc":"2.0","id":0,"method":"proxy/successor","params":{"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":true}}}}}`)
	p.send(`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{}}}`)
	p.expect(`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{"_meta":{"acp-normalize":{"modules":["test"],"version":"t"}}}}}`)
	p.send(`{"jsonrpc":"2.0","id":"c-1","method":"proxy/successor","params":{"method":"session/request_permission","params":{"sessionId":"s"},"_meta":{"hop":1}}}`)
	p.expect(`{"jsonrpc":"2.0","id":"c-1","method":"session/request_permission","params":{"sessionId":"s"}}`)
	p.send(`{"jsonrpc":"2.0","method":"proxy/successor","params":{"method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}}}`)
	p.expect(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}}`)
	p.send(`{"jsonrpc":"2.0","id":5,"method":"session/new","params":{"cwd":"/w","mcpServers":[]}}`)
	p.expect(`{"jsonrpc":"2.0","id":5,"method":"proxy/successor","params":{"method":"session/new","params":{"cwd":"/w","mcpServers":[]}}}`)
	p.send(`{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":5}}`)
	p.expect(`{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":5}}`)
	p.send(`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}`)
	p.expect(`{"jsonrpc":"2.0","method":"proxy/successor","params":{"method":"session/cancel","params":{"sessionId":"s"}}}`)
	if rest, code, err := p.end(); code != 0 || err != nil {
		// Session/new is still open: F6 answers it at the end.
		t.Fatalf("exit %d, err %v (wrote %q)", code, err, rest)
	}
}

// K3: a component whose client sends no handshake exits 2, saying so;
// a request gets an error response first, so a conductor shows why.
func TestK3ComponentWithoutHandshake(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, first, reply string
	}{
		{"plain initialize", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`, `"id":1,"error":{"code":-32600,`},
		{"initialize with proxy false", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"_meta":{"proxy":false}}}`, `"id":1,"error":{"code":-32600,`},
		{"a notification first", `{"jsonrpc":"2.0","method":"session/cancel","params":{}}`, ""},
		{"not JSON", `hello`, ""},
		{"nothing at all", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := startComponent(t, nil)
			if tt.first != "" {
				p.send(tt.first)
			}
			rest, code, err := p.end()
			var herr *HandshakeError
			if code != 2 || !errors.As(err, &herr) || herr.Got != NoHandshake {
				t.Fatalf("exit %d, err %v; want 2 and a HandshakeError", code, err)
			}
			if !strings.Contains(err.Error(), "no agent command") || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %q: want one line that says no agent command", err)
			}
			if tt.reply == "" && rest != "" || tt.reply != "" && !strings.Contains(rest, tt.reply) {
				t.Fatalf("wrote %q, want a reply with %q", rest, tt.reply)
			}
			if strings.Contains(rest, "_proxy/successor") {
				t.Fatalf("the frame reached the successor: %q", rest)
			}
		})
	}
}

// K3: a proxy with an agent command whose client sends a conductor's
// proxy handshake exits 2; nothing of the stream reaches the agent.
func TestK3AgentCommandWithHandshake(t *testing.T) {
	t.Parallel()
	for _, hs := range []string{
		tsInit,
		`{"jsonrpc":"2.0","id":1,"method":"proxy/initialize","params":{"protocolVersion":1}}`,
	} {
		t.Run(HandshakeOf([]byte(hs)).String(), func(t *testing.T) {
			t.Parallel()
			var stderr bytes.Buffer
			p := startComponentStderr(t, []string{"sh", "-c", "cat >&2"}, &stderr)
			p.send("\n" + hs) // a blank line first is still no frame (F1)
			rest, code, err := p.end()
			var herr *HandshakeError
			if code != 2 || !errors.As(err, &herr) || herr.Got == NoHandshake {
				t.Fatalf("exit %d, err %v; want 2 and the handshake named", code, err)
			}
			if !strings.Contains(rest, `"id":1,"error":{"code":-32600,`) {
				t.Fatalf("wrote %q, want an error response to id 1", rest)
			}
			if stderr.Len() != 0 {
				t.Fatalf("the agent received %q", stderr.String())
			}
		})
	}
}

// captureInputs returns a capture's input records as "side frame".
func captureInputs(t *testing.T, capture []byte) []string {
	t.Helper()
	cr := pipe.NewCaptureReader(bytes.NewReader(capture))
	var out []string
	for {
		rec, err := cr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if rec.IsInput() && rec.Frame != nil {
			out = append(out, rec.From.String()+" "+string(rec.Frame))
		}
	}
}

func at(s []string, i int) string {
	if i < len(s) {
		return s[i]
	}
	return "<none>"
}

// K2: what the successor sends is never itself a conductor envelope. A
// wrapped request or notification whose inner method is a wrapper's
// (_proxy/successor/*, proxy/successor, the handshakes) would leave the
// component plain toward the client side, where the conductor reads it as
// the component's own frame for its successor and sends it back there:
// it is refused (an error to the wrapper's id; a notification dropped),
// escaped spellings included, and nothing of it reaches the client side.
func TestK2ComponentWrappedWrapperRefused(t *testing.T) {
	t.Parallel()
	p := startComponent(t, nil)
	p.handshake()

	for i, inner := range []string{"_proxy/successor/request", "_proxy/successor/notification", "proxy/successor", `_proxy\/successor\/request`, "proxy/initialize"} {
		id := 10 + i
		p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"_proxy/successor/request","params":{"method":"%s","params":{"method":"session/prompt","params":{}}}}`, id, inner))
		got, err := p.out.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if env := pipe.Peek([]byte(got)); env.Kind != pipe.Response || string(env.ID) != fmt.Sprint(id) || !env.Error {
			t.Errorf("a wrapped %s: the component wrote %s, want an error response to %d", inner, got, id)
		}
	}
	p.send(`{"jsonrpc":"2.0","method":"_proxy/successor/notification","params":{"method":"_proxy/successor/notification","params":{"method":"session/cancel","params":{}}}}`)
	// A frame that passes shows that nothing of the notification went out.
	p.send(`{"jsonrpc":"2.0","method":"_proxy/successor/notification","params":{"method":"session/update","params":{"sessionId":"s"}}}`)
	p.expect(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s"}}`)
	if rest, code, err := p.end(); code != 0 || err != nil || rest != "" {
		t.Errorf("end: %q, code %d, err %v", rest, code, err)
	}
}

// P6 in component mode: memory is O(largest frame) while that frame
// passes, not for the rest of the connection. After a 64 MiB wrapped
// frame from the successor, the link keeps no buffer of its size (the
// wrap side already dropped its own; the unwrap side kept it).
// Not parallel: it reads the heap; no recording, which holds the frame.
func TestK2ComponentHugeWrappedFrameNotKept(t *testing.T) {
	p := startComponentRecording(t, nil, false)
	p.handshake()
	small := `{"jsonrpc":"2.0","method":"_proxy/successor/notification","params":{"method":"session/update","params":{"sessionId":"s"}}}`
	p.send(small)
	p.expect(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s"}}`)
	before := heapInUse()

	const size = 64 << 20
	text := strings.Repeat("x", size)
	sent := p.sendAsync(`{"jsonrpc":"2.0","method":"_proxy/successor/notification","params":{"method":"session/update","params":{"sessionId":"s","text":"` + text + `"}}}`)
	got, err := p.out.ReadString('\n')
	if err != nil || len(got) < size {
		t.Fatalf("the huge frame did not pass: %d bytes, %v", len(got), err)
	}
	if err := <-sent; err != nil {
		t.Fatalf("writing the huge frame to the component: %v", err)
	}
	got, text = "", ""
	// Two more frames: every reader and scratch buffer has moved on.
	for range 2 {
		p.send(small)
		p.expect(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s"}}`)
	}
	if grown := heapInUse() - before; grown > size/2 {
		t.Errorf("P6: %d MiB still held after a %d MiB frame from the successor passed", grown>>20, size>>20)
	}

	// The other way: a huge client frame wrapped for the successor.
	text = strings.Repeat("y", size)
	sent = p.sendAsync(`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s","text":"` + text + `"}}`)
	if got, err = p.out.ReadString('\n'); err != nil || len(got) < size {
		t.Fatalf("the huge client frame did not pass: %d bytes, %v", len(got), err)
	}
	if err := <-sent; err != nil {
		t.Fatalf("writing the huge client frame to the component: %v", err)
	}
	got, text = "", ""
	for range 2 {
		p.send(`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}`)
		p.expect(`{"jsonrpc":"2.0","method":"_proxy/successor/notification","params":{"method":"session/cancel","params":{"sessionId":"s"}}}`)
	}
	if grown := heapInUse() - before; grown > size/2 {
		t.Errorf("P6: %d MiB still held after a %d MiB frame for the successor passed", grown>>20, size>>20)
	}
}

func heapInUse() int64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return int64(m.HeapInuse)
}

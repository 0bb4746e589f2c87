package main

import (
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// longText is chat text longer than the relay's read window (1 MiB), so
// a frame holding it streams (F3).
var longText = strings.Repeat("0123456789abcdef", (1<<20+300<<10)/16)

// agentExited is the answer the proxy gives a client request the agent
// left unanswered (F6).
func agentExited(id string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"error":{"code":-32603,"message":"agent exited"}}` + "\n"
}

// TestE2EF3LongAgentFrameEdges: long agent frames at the edges of the
// framing rules, through the real binary: cut off by the agent's exit
// (F6: delivered, on a line of its own, before the -32603 answers), an
// answer whose id comes after the window and is spelled otherwise (F6:
// it answers the request), lines that are not JSON (F2), a byte order
// mark and "\r\n" (F1). Each is what the same frame gives when it is
// short: the window changes nothing a client sees.
func TestE2EF3LongAgentFrameEdges(t *testing.T) {
	t.Parallel()
	short := `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"after"}}}}`
	chunk := `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"` + longText + `"}}}}`
	tests := []struct {
		name  string
		agent string // what the agent writes after the client's request, then it exits
		code  int    // the agent's exit code
		want  string // what the client gets after the request
	}{
		{"a frame cut off by the agent's exit", chunk[:len(chunk)-10], 3, chunk[:len(chunk)-10] + "\n" + agentExited("100")},
		{"an answer cut off by the agent's exit", `{"jsonrpc":"2.0","id":100,"result":{"text":"` + longText, 0, `{"jsonrpc":"2.0","id":100,"result":{"text":"` + longText + "\n" + agentExited("100")},
		{"a short answer cut off by the agent's exit", `{"jsonrpc":"2.0","id":100,"result":{"text":"abc`, 0, `{"jsonrpc":"2.0","id":100,"result":{"text":"abc` + "\n" + agentExited("100")},
		{"an answer whose id comes after the window", `{"jsonrpc":"2.0","result":{"text":"` + longText + `"},"id":1E2}` + "\n", 0, `{"jsonrpc":"2.0","result":{"text":"` + longText + `"},"id":1E2}` + "\n"},
		{"an answer whose escaped id key comes after the window", `{"jsonrpc":"2.0","result":{"text":"` + longText + `"},"\u0069d":100}` + "\n", 0, `{"jsonrpc":"2.0","result":{"text":"` + longText + `"},"\u0069d":100}` + "\n"},
		{"an error answer with an id after the window", `{"jsonrpc":"2.0","error":{"code":1,"message":"` + longText + `"},"id":100}` + "\n", 0, `{"jsonrpc":"2.0","error":{"code":1,"message":"` + longText + `"},"id":100}` + "\n"},
		{"a line that is not JSON", "Traceback: " + longText + "\n" + short + "\n", 0, short + "\n" + agentExited("100")},
		{"a line that is not JSON, cut off by the exit", "panic: " + longText, 2, agentExited("100")},
		{"a line that is not JSON after a byte order mark", "\xEF\xBB\xBFpanic: " + longText + "\n" + short + "\n", 0, short + "\n" + agentExited("100")},
		{"a long first frame after a byte order mark, crlf", "\xEF\xBB\xBF" + chunk + "\r\n" + short + "\r\n", 0, chunk + "\n" + short + "\n" + agentExited("100")},
		{"a carriage return at the end of the stream", chunk + "\r", 0, chunk + "\r\n" + agentExited("100")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			file := filepath.Join(t.TempDir(), "out")
			if err := os.WriteFile(file, []byte(tt.agent), 0o600); err != nil {
				t.Fatal(err)
			}
			s := start(t, script(t, "wait session/prompt", "outfile "+file, "exit "+strconv.Itoa(tt.code)), nil)
			s.send(`{"jsonrpc":"2.0","id":100,"method":"session/prompt","params":{"sessionId":"s","prompt":[]}}`)
			got := s.readAll()
			if got != tt.want {
				t.Errorf("the client got %d bytes, want %d: %s", len(got), len(tt.want), firstDiff(got, tt.want))
			}
			s.stdin.Close()
			if code := s.wait(time.Minute); code != tt.code {
				t.Errorf("exit code %d, want %d; stderr:\n%s", code, tt.code, s.stderr.String())
			}
		})
	}
}

// TestE2EF5EndsInTheMiddleOfALongFrame: the session ends while a long
// frame is half passed on (F5, F6): by a signal to the proxy while the
// agent's or the client's frame streams, or by the client's EOF. The
// proxy exits with the agent's status, the half frame ends with a newline
// so what follows stands on its own line, and a signal still gives the
// modules their last word before the agent hears of it (C12: Cursor gets
// "cancelled" for the plan the proxy holds, although the client's frame
// to the agent never ended).
func TestE2EF5EndsInTheMiddleOfALongFrame(t *testing.T) {
	t.Parallel()
	head := `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"` + longText
	prompt := `{"jsonrpc":"2.0","id":7,"method":"session/prompt","params":{"sessionId":"s","prompt":[]}}`
	t.Run("SIGTERM while the agent's frame streams", func(t *testing.T) {
		t.Parallel()
		s := start(t, script(t, "wait session/prompt", "outpartial "+head, "sleep 60s"), []string{"--kill-grace", "5s"})
		s.send(prompt)
		got := make([]byte, len(head))
		if _, err := io.ReadFull(s.stdout, got); err != nil || string(got) != head {
			t.Fatalf("the frame's head: %v, %d bytes", err, len(got))
		}
		if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if rest, want := s.readAll(), "\n"+agentExited("7"); rest != want {
			t.Errorf("after the head: %q, want %q", rest, want)
		}
		if code := s.wait(time.Minute); code != 128+15 {
			t.Errorf("exit code %d, want 143; stderr:\n%s", code, s.stderr.String())
		}
	})
	t.Run("client EOF while the agent's frame streams", func(t *testing.T) {
		t.Parallel()
		s := start(t, script(t, "wait session/prompt", "outpartial "+head, "wait never"), []string{"--kill-grace", "5s"})
		s.send(prompt)
		got := make([]byte, len(head))
		if _, err := io.ReadFull(s.stdout, got); err != nil || string(got) != head {
			t.Fatalf("the frame's head: %v, %d bytes", err, len(got))
		}
		s.stdin.Close()
		if rest, want := s.readAll(), "\n"+agentExited("7"); rest != want {
			t.Errorf("after the head: %q, want %q", rest, want)
		}
		if code := s.wait(time.Minute); code != 97 {
			t.Errorf("exit code %d, want the agent's 97; stderr:\n%s", code, s.stderr.String())
		}
	})
	t.Run("SIGTERM while the client's frame streams, a Cursor plan held", func(t *testing.T) {
		t.Parallel()
		s := start(t, script(t,
			"ignore-term",
			"wait session/new",
			`out {"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"}}`,
			"wait session/prompt",
			`out {"jsonrpc":"2.0","id":0,"method":"cursor/create_plan","params":{"toolCallId":"plan-1","name":"Refactor","plan":"# Plan"}}`,
			"readn 1100000",
			`out {"jsonrpc":"2.0","method":"_test/read","params":{}}`,
			"wait cancelled",
			"err GOT-CANCELLED",
			"exit 0"), []string{"--kill-grace", "5s"})
		s.send(`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}`)
		s.readLine()
		s.send(`{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}`)
		for !strings.Contains(s.readLine(), `"session/request_permission"`) {
		}
		// Half a long frame, the rest never comes: the agent reads its
		// first pieces, so the proxy is in the middle of it.
		go func() {
			_, _ = io.WriteString(s.stdin, `{"jsonrpc":"2.0","method":"_x/paste","params":{"x":"`+longText)
		}()
		for !strings.Contains(s.readLine(), `"_test/read"`) {
		}
		if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if code := s.wait(time.Minute); code != 0 {
			t.Errorf("exit code %d, want 0; stderr:\n%s", code, s.stderr.String())
		}
		if !strings.Contains(s.stderr.String(), "GOT-CANCELLED") {
			t.Errorf("the agent never got cancelled; stderr:\n%s", s.stderr.String())
		}
	})
}

// TestE2EC12LongAnswerToTheProxysRequest: the client's answer to one of
// the proxy's own requests (Cursor's plan approval, C9) is the proxy's
// however long it is and wherever its id comes (F3: held whole while the
// proxy has a request open to the client): Cursor gets the proxy's
// answer made from it, and the agent never sees the client's.
func TestE2EC12LongAnswerToTheProxysRequest(t *testing.T) {
	t.Parallel()
	result := `"result":{"_meta":{"pad":"` + longText + `"},"outcome":{"outcome":"selected","optionId":"accept"}}`
	tests := []struct {
		name   string
		answer func(id string) string
	}{
		{"its id first", func(id string) string { return `{"jsonrpc":"2.0","id":"` + id + `",` + result + `}` }},
		{"its id after the window", func(id string) string { return `{"jsonrpc":"2.0",` + result + `,"id":"` + id + `"}` }},
		{"its result and id after the window", func(id string) string {
			return `{"jsonrpc":"2.0","_pad":"` + longText + `","result":{"outcome":{"outcome":"selected","optionId":"accept"}},"id":"` + id + `"}`
		}},
		{"its id after the window, escaped", func(id string) string {
			return `{"jsonrpc":"2.0",` + result + `,"id":"` + strings.ReplaceAll(id, "-", `\u002d`) + `"}`
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := start(t, script(t,
				"wait session/new",
				`out {"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"}}`,
				"wait session/prompt",
				`out {"jsonrpc":"2.0","id":0,"method":"cursor/create_plan","params":{"toolCallId":"plan-1","name":"Refactor","plan":"# Plan"}}`,
				`wait "accepted"`,
				"exit 0"), nil)
			s.send(`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}`)
			s.readLine()
			s.send(`{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}`)
			var id string
			for id == "" {
				if l := s.readLine(); strings.Contains(l, `"session/request_permission"`) {
					_, rest, _ := strings.Cut(l, `"id":"`)
					id, _, _ = strings.Cut(rest, `"`)
				}
			}
			s.send(tt.answer(id))
			s.stdin.Close()
			s.readAll()
			if code := s.wait(time.Minute); code != 0 {
				t.Errorf("exit code %d: Cursor never got the plan's answer; stderr:\n%s", code, s.stderr.String())
			}
		})
	}
}

// TestE2EF2LongLineHeldForTheRecord: with --record, an agent line that is
// not JSON, longer than the byte budget, that comes while the client's
// long frame is being recorded in pieces (so it is held to be recorded
// whole, R1, and outgrows the hold) stays off the client's stream (F2).
func TestE2EF2LongLineHeldForTheRecord(t *testing.T) {
	t.Parallel()
	short := `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"after"}}}}`
	dir := t.TempDir()
	file := filepath.Join(dir, "out")
	line := "panic: " + strings.Repeat("z", 66<<20) + "\n" + short + "\n"
	if err := os.WriteFile(file, []byte(line), 0o600); err != nil {
		t.Fatal(err)
	}
	s := start(t, script(t, "readn 1100000", "outfile "+file, "exit 0"), []string{"--record", filepath.Join(dir, "capture.jsonl")})
	go func() {
		// The client's long frame, half of it: the agent's line comes
		// while it is being recorded in pieces.
		_, _ = io.WriteString(s.stdin, `{"jsonrpc":"2.0","method":"_x/paste","params":{"x":"`+longText)
	}()
	if got := s.readLine(); got != short {
		t.Errorf("the client got %d bytes starting %.40q, want only the frame after the line", len(got), got)
	}
	s.stdin.Close()
	s.readAll()
	if code := s.wait(time.Minute); code != 0 {
		t.Errorf("exit code %d; stderr:\n%s", code, s.stderr.String())
	}
}

// TestE2EK2LongFramesInComponentMode: in component mode (K1) long frames
// come whole out of the conductor's envelopes and go whole into them
// (F3), their inner bytes spliced unchanged both ways (K2, P1).
func TestE2EK2LongFramesInComponentMode(t *testing.T) {
	t.Parallel()
	p := startComponentProc(t)
	p.send(`{"jsonrpc":"2.0","id":0,"method":"proxy/initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`)
	p.next() // the initialize, through proxy/successor
	p.send(`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{}}}`)
	p.next() // the answer

	update := `{"sessionId":"s-1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"` + longText + longText + `"}}}`
	p.send(`{"jsonrpc":"2.0","method":"proxy/successor","params":{"method":"session/update","params":` + update + `}}`)
	if got, want := string(p.next()), `{"jsonrpc":"2.0","method":"session/update","params":`+update+`}`; got != want {
		t.Errorf("the successor's long notification unwrapped: %d bytes, want %d: %s", len(got), len(want), firstDiff(got, want))
	}
	params := `{"sessionId":"s-1","prompt":[{"type":"text","text":"` + longText + longText + `"}]}`
	p.send(`{"jsonrpc":"2.0","id":5,"method":"session/prompt","params":` + params + `}`)
	wrapped := p.next()
	if inner := member(t, member(t, wrapped, "params"), "params"); string(inner) != params {
		t.Errorf("the client's long request wrapped: params of %d bytes, want %d", len(inner), len(params))
	}
	if code := p.exit(); code != 0 {
		t.Errorf("exit %d; stderr: %s", code, p.stderr)
	}
}

package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// openPTY opens a pseudo-terminal pair: the side a program writes to as
// its terminal, and the side a test reads what the terminal got from.
func openPTY(t *testing.T) (term, master *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	var unlock int32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		m.Close()
		t.Skipf("no pseudo-terminal: unlock: %v", e)
	}
	var n uint32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
		m.Close()
		t.Skipf("no pseudo-terminal: number: %v", e)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		m.Close()
		t.Skipf("no pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { m.Close(); s.Close() })
	return s, m
}

// TestE2ELogsToATerminalAreEscaped: the proxy's log lines on a terminal
// carry an agent's words escaped: a non-JSON line on the agent's stdout
// is logged (F2) with its first bytes, and tint, which quotes a value,
// put its ESC bytes back raw with colour on, so an agent could set the
// window title or write the clipboard through the proxy's own log.
// Without colour (NO_COLOR, TERM=dumb) tint's quoting is safe but it
// cuts from a value what looks like an escape sequence and all that
// follows a byte that is not UTF-8: the log must show every word, escaped.
func TestE2ELogsToATerminalAreEscaped(t *testing.T) {
	for _, tt := range []struct {
		name  string
		env   []string
		color bool
	}{
		{"colour", []string{"TERM=xterm"}, true},
		{"NO_COLOR", []string{"TERM=xterm", "NO_COLOR=1"}, false},
		{"TERM=dumb", []string{"TERM=dumb"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, err := stderrOnTerminal(t, append(tt.env, envFakeAgent+"="+script(t,
				"out banner \x1b]0;pwned\x07 \x1b]52;c;ZWNobyBoaQ==\x07 \u009b31m \u202e \x1b[8mhidden \xff end", "exit 0")),
				append([]string{"--kill-grace", "30s", "--modules", "none", "--"}, fakeAgentArgv(t)...)...)
			var ee *exec.ExitError
			if err != nil && !errors.As(err, &ee) {
				t.Fatal(err)
			}
			for _, word := range []string{"banner", "pwned", "ZWNobyBoaQ==", "hidden", "end"} {
				if !bytes.Contains(out, []byte(word)) {
					t.Errorf("the agent's non-JSON line is not logged whole on the terminal (no %q):\n%q", word, out)
				}
			}
			if tt.color != bytes.Contains(out, []byte("\x1b[")) {
				t.Errorf("colour %v expected: not the case under test:\n%q", tt.color, out)
			}
			for _, bad := range []string{"\x1b]", "\x1b[8m", "\x07", "\u009b", "\u202e", "\xff"} {
				if bytes.Contains(out, []byte(bad)) {
					t.Errorf("the log on the terminal holds the agent's %q:\n%q", bad, out)
				}
			}
		})
	}
}

// stderrOnTerminal runs the binary with args and env (the environment's
// NO_COLOR and TERM replaced by env's), stdin empty, stdout discarded and
// stderr on a pseudo-terminal; it returns what the terminal got and how
// the process ended.
func stderrOnTerminal(t *testing.T, env []string, args ...string) ([]byte, error) {
	t.Helper()
	term, master := openPTY(t)
	cmd := exec.Command(proxyBinary, args...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "NO_COLOR=") && !strings.HasPrefix(kv, "TERM=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	cmd.Stdin = strings.NewReader("")
	cmd.Stdout = io.Discard
	cmd.Stderr = term
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	term.Close() // the proxy holds it; the master reads EIO once it is gone
	got := make(chan []byte, 1)
	go func() {
		var buf bytes.Buffer
		b := make([]byte, 4096)
		for {
			n, err := master.Read(b)
			buf.Write(b[:n])
			if err != nil {
				got <- buf.Bytes()
				return
			}
		}
	}()
	errc := make(chan error, 1)
	go func() { errc <- cmd.Wait() }()
	var err error
	select {
	case err = <-errc:
	case <-time.After(60 * time.Second): // a hang detector, not a timing assertion
		_ = cmd.Process.Kill()
		t.Fatal("the proxy did not exit")
	}
	return <-got, err
}

// runOnTerminal runs the binary with stdout and stderr on a
// pseudo-terminal and returns what the terminal got.
func runOnTerminal(t *testing.T, args ...string) []byte {
	t.Helper()
	term, master := openPTY(t)
	cmd := exec.Command(proxyBinary, args...)
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	cmd.Stdout, cmd.Stderr = term, term
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	term.Close()
	var buf bytes.Buffer
	b := make([]byte, 4096)
	for {
		n, err := master.Read(b)
		buf.Write(b[:n])
		if err != nil {
			break
		}
	}
	_ = cmd.Wait()
	return buf.Bytes()
}

// TestE2ECapturesOnATerminalAreEscaped: what a capture or a trace holds
// reaches a terminal escaped, whichever command prints it: the frames
// as JSON (replay's JSON lines, check --json, export, mock-agent's
// stdout) with JSON escapes (the same values; valid JSON cannot hold raw
// C0 controls, but it can hold C1 controls and bidi overrides), the text
// views and the error lines that quote a file (a trace header of another
// version) with terminal.Text, mock-agent's replayed stderr
// lines too; replay --format html, a page that holds the frames' bytes,
// is not written to a terminal at all. Piped, the frames' bytes are left
// as they are.
func TestE2ECapturesOnATerminalAreEscaped(t *testing.T) {
	capture := filepath.Join(t.TempDir(), "c.jsonl")
	// C1 controls and a bidi override as UTF-8, and a lone 0x9b byte: CSI
	// to a terminal that reads 8-bit controls.
	bad := "x\u009b31m\u009d0;pwned\u009c\u202edne q\x9b32m"
	frame := `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"` + bad + `"}}}}`
	// A method outside ACP: check reports it, the frame its example.
	vendor := `{"jsonrpc":"2.0","method":"craft/x","params":{"t":"` + bad + `"}}`
	// A stderr line the mock agent replays on its stderr.
	stderr := `{"seq":3,"from":"agent","stderr":"fatal \u001b]0;pwned\u0007 \u009b31m \u202e"}`
	if err := os.WriteFile(capture, []byte(`{"seq":1,"from":"agent","frame":`+frame+"}\n"+`{"seq":2,"from":"agent","frame":`+vendor+"}\n"+stderr+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A trace of a version this reader does not know: the error quotes it.
	trace := filepath.Join(t.TempDir(), "t.jsonl")
	if err := os.WriteFile(trace, []byte(`{"type":"header","format":"acp-inspector-trace","version":"2`+bad+`"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"replay", capture},
		{"replay", "--format", "pretty", trace},
		{"export", trace},
		{"replay", "--format", "pretty", capture},
		// A page for a browser: refused on a terminal, as gzip refuses
		// to write compressed data to one.
		{"replay", "--format", "html", capture},
		{"check", capture},
		{"check", "--json", capture},
		{"export", capture},
		{"mock-agent", capture},
	} {
		t.Run(strings.Join(args[:len(args)-1], " "), func(t *testing.T) {
			out := runOnTerminal(t, args...)
			if len(out) == 0 {
				t.Fatal("nothing on the terminal")
			}
			for _, r := range []string{"\u009b", "\u009d", "\u009c", "\u202e", "\x1b]", "\x07", "q\x9b"} {
				if bytes.Contains(out, []byte(r)) {
					t.Errorf("%q reached the terminal raw:\n%q", r, out)
				}
			}
		})
	}
	// Piped: byte for byte.
	code, out, stderr := runBinary(t, "replay", capture)
	if code != 0 || !strings.Contains(out, bad) {
		t.Errorf("replay to a pipe: exit %d, the frame's bytes changed:\n%q\n%s", code, out, stderr)
	}
}

// TestE2ERecordToATerminalIsEscaped: a capture recorded to a terminal
// (the documented --record /dev/stderr with stderr on one, or a link to
// the terminal's device) is shown with the JSON escapes of the other
// JSON output on a terminal (terminal.JSON: the same values): a frame is
// spliced into its record verbatim (R1), and valid JSON holds C1
// controls and bidi overrides raw, so the agent steered the terminal
// through the recording.
func TestE2ERecordToATerminalIsEscaped(t *testing.T) {
	bad := "x\u009b31m\u009d0;pwned\u009c\u202edne"
	frame := `{"jsonrpc":"2.0","method":"_x/y","params":{"t":"` + bad + `"}}`
	for _, tt := range []struct {
		name string
		path func(term *os.File) string
	}{
		{"/dev/stderr", func(*os.File) string { return "/dev/stderr" }},
		{"a link to the terminal", func(term *os.File) string {
			link := filepath.Join(t.TempDir(), "capture.jsonl")
			if err := os.Symlink(term.Name(), link); err != nil {
				t.Fatal(err)
			}
			return link
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			term, master := openPTY(t)
			cmd := exec.Command(proxyBinary, append([]string{"--record", tt.path(term), "--modules", "none", "--"}, fakeAgentArgv(t)...)...)
			cmd.Env = append(os.Environ(), "NO_COLOR=1", envFakeAgent+"="+script(t, "out "+frame, "wait never"))
			cmd.Stdin = strings.NewReader("")
			cmd.Stdout = io.Discard
			cmd.Stderr = term
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			term.Close()
			var buf bytes.Buffer
			b := make([]byte, 4096)
			for {
				n, err := master.Read(b)
				buf.Write(b[:n])
				if err != nil {
					break
				}
			}
			_ = cmd.Wait()
			out := buf.Bytes()
			if !bytes.Contains(out, []byte(`"event":"start"`)) || !bytes.Contains(out, []byte(`"method":"_x/y"`)) {
				t.Fatalf("the capture did not reach the terminal:\n%q", out)
			}
			for _, r := range []string{"\u009b", "\u009d", "\u009c", "\u202e"} {
				if bytes.Contains(out, []byte(r)) {
					t.Errorf("%q reached the terminal raw:\n%q", r, out)
				}
			}
			if !bytes.Contains(out, []byte(`x\u009b31m\u009d0;pwned\u009c\u202edne`)) {
				t.Errorf("the frame's text is not shown as JSON escapes:\n%q", out)
			}
		})
	}
}

// TestE2EFileNamesOnATerminalAreEscaped: the lines that name a file
// (a capture's, export's -o) reach a terminal escaped as the rest: a
// file name is anybody's bytes (a capture unpacked from a bug report).
func TestE2EFileNamesOnATerminalAreEscaped(t *testing.T) {
	dir := t.TempDir()
	hostile := "c\x1b]0;pwned\x07\u009b31m\u202e"
	capture := filepath.Join(dir, hostile+".jsonl")
	// More bad lines than are shown one by one: the count line names
	// the file too.
	var b strings.Builder
	b.WriteString(`{"seq":1,"from":"agent","frame":{"jsonrpc":"2.0","method":"_x/y","params":{}}}` + "\n")
	for range maxReportedLines + 3 {
		b.WriteString("not a record\n")
	}
	if err := os.WriteFile(capture, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(dir, "good.jsonl")
	if err := os.WriteFile(good, []byte(`{"seq":1,"from":"agent","frame":{"jsonrpc":"2.0","method":"_x/y","params":{}}}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		args []string
		want string // a line of the output, escaped
	}{
		{"replay's count of lines not shown", []string{"replay", capture}, "more bad lines not shown"},
		{"check's count of lines not shown", []string{"check", capture}, "more bad lines not shown"},
		{"export's summary", []string{"export", "-o", filepath.Join(dir, hostile+".trace"), good}, "export: 1 frames to"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out := runOnTerminal(t, tt.args...)
			if !bytes.Contains(out, []byte(tt.want)) {
				t.Fatalf("no %q on the terminal:\n%q", tt.want, out)
			}
			for _, r := range []string{"\x1b]", "\x07", "\u009b", "\u202e"} {
				if bytes.Contains(out, []byte(r)) {
					t.Errorf("%q reached the terminal raw:\n%q", r, out)
				}
			}
		})
	}
}

// TestE2EAgentStderrOnATerminalIsEscaped: the agent's stderr lines, which
// the proxy copies to its own stderr (F4), reach a terminal escaped like
// every other text the proxy prints there: an agent (or a model steering
// it) cannot set the window title, write the clipboard (OSC 52) or hide
// text through the proxy. The log file keeps the lines as written.
func TestE2EAgentStderrOnATerminalIsEscaped(t *testing.T) {
	const hostile = "boot \x1b]0;pwned\x07 \x1b]52;c;ZWNobyBoaQ==\x07 \u009b31m \u202e \x1b[8mhidden \xff end"
	logFile := filepath.Join(t.TempDir(), "proxy.log")
	out, err := stderrOnTerminal(t, []string{"NO_COLOR=1", envFakeAgent + "=" + script(t, "err "+hostile, "exit 0")},
		append([]string{"--kill-grace", "30s", "--modules", "none", "--log-file", logFile, "--"}, fakeAgentArgv(t)...)...)
	if err != nil {
		t.Fatal(err)
	}
	for _, word := range []string{"boot", "pwned", "ZWNobyBoaQ==", "hidden", "end"} {
		if !bytes.Contains(out, []byte(word)) {
			t.Errorf("the agent's stderr line is not shown whole on the terminal (no %q):\n%q", word, out)
		}
	}
	for _, bad := range []string{"\x1b", "\x07", "\u009b", "\u202e", "\xff"} {
		if bytes.Contains(out, []byte(bad)) {
			t.Errorf("the terminal got the agent's %q:\n%q", bad, out)
		}
	}
	logged, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(logged, []byte(hostile)) {
		t.Errorf("the log file does not keep the agent's stderr line as written:\n%q", logged)
	}
}

//go:build unix

package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestE2ERecordRefusesSymlink: --record never follows a symbolic link (R1):
// the file it points to is neither truncated nor chmodded, a dangling
// link's target is not created, the refusal is logged at error, and the
// session runs without recording.
func TestE2ERecordRefusesSymlink(t *testing.T) {
	tests := []struct {
		name     string
		existing bool // the link's target exists
	}{
		{"link to an existing file", true},
		{"dangling link", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			target := filepath.Join(dir, "victim")
			if tt.existing {
				if err := os.WriteFile(target, []byte("keep me\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			link := filepath.Join(dir, "capture.jsonl")
			if err := os.Symlink(target, link); err != nil {
				t.Fatal(err)
			}
			s := start(t, script(t, "wait session/new", `out {"jsonrpc":"2.0","id":1,"result":{"sessionId":"s"}}`),
				[]string{"--record", link, "--modules", "none"})
			s.send(`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{}}`)
			if got := s.readLine(); got != `{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s"}}` {
				t.Fatalf("session did not run: got %q; stderr:\n%s", got, s.stderr)
			}
			s.stdin.Close()
			if code := s.wait(20 * time.Second); code != 0 {
				t.Fatalf("exit code %d; stderr:\n%s", code, s.stderr)
			}
			stderr := s.stderr.String()
			if !strings.Contains(stderr, "ERR") || !strings.Contains(stderr, "symbolic link") || !strings.Contains(stderr, "without recording") {
				t.Errorf("no error about the refused link on stderr:\n%s", stderr)
			}
			st, err := os.Lstat(target)
			switch {
			case !tt.existing && err == nil:
				t.Fatal("the dangling link's target was created")
			case !tt.existing:
			case err != nil:
				t.Fatal(err)
			case st.Mode().Perm() != 0o644:
				t.Errorf("target mode changed to %v", st.Mode().Perm())
			default:
				if data, _ := os.ReadFile(target); string(data) != "keep me\n" {
					t.Errorf("target content changed to %q", data)
				}
			}
			if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
				t.Errorf("the link itself was replaced: %v %v", st, err)
			}
		})
	}
}

// TestE2ERecordingNeverStallsTheSession: a capture file nobody reads (a
// FIFO whose reader is asleep: a stuck disk) does not stall the relay;
// the capture is complete once it can be written.
func TestE2ERecordingNeverStallsTheSession(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "capture.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	// Opened for reading but not read until the session's frames are all
	// through: the proxy's writes to it fill the pipe and then block.
	rf, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer rf.Close()
	s := start(t, script(t, "echo"), []string{"--record", fifo, "--modules", "none"})
	const n = 64
	pad := strings.Repeat("x", 64<<10)
	frame := func(i int) string {
		return `{"jsonrpc":"2.0","method":"n","params":{"i":` + strconv.Itoa(i) + `,"pad":"` + pad + `"}}`
	}
	go func() {
		for i := range n {
			if _, err := io.WriteString(s.stdin, frame(i)+"\n"); err != nil {
				return
			}
		}
	}()
	echoed := make(chan error, 1)
	go func() {
		for i := range n {
			l, err := s.stdout.ReadString('\n')
			if err != nil || l != frame(i)+"\n" {
				echoed <- fmt.Errorf("frame %d: %v (%d bytes)", i, err, len(l))
				return
			}
		}
		echoed <- nil
	}()
	select {
	case err := <-echoed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(60 * time.Second): // a hang detector, not a timing assertion
		t.Fatalf("the session stalled behind its capture; stderr:\n%s", s.stderr)
	}
	// Now the disk comes back: the whole capture arrives.
	if err := syscall.SetNonblock(int(rf.Fd()), false); err != nil {
		t.Fatal(err)
	}
	captured := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(rf)
		captured <- b
	}()
	s.stdin.Close()
	if code := s.wait(60 * time.Second); code != 0 {
		t.Fatalf("exit code %d; stderr:\n%s", code, s.stderr)
	}
	capture := string(<-captured)
	if got := strings.Count(capture, `"pad":"`); got != 2*n {
		t.Errorf("capture has %d of %d frames", got, 2*n)
	}
	if !strings.Contains(capture, `"event":"exit","code":0`) || strings.Contains(capture, `"event":"dropped"`) {
		t.Errorf("capture does not end with its exit record, or dropped records: %.300s", capture[max(0, len(capture)-300):])
	}
}

// TestE2ERecordingLostIsReported: a capture that cannot be written (a full
// disk) is reported at error when the session ends, and the session runs;
// a session that otherwise succeeded exits 1.
func TestE2ERecordingLostIsReported(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full")
	}
	s := start(t, script(t, "wait session/new", `out {"jsonrpc":"2.0","id":1,"result":{"sessionId":"s"}}`),
		[]string{"--record", "/dev/full", "--modules", "none"})
	s.send(`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{}}`)
	if got := s.readLine(); got != `{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s"}}` {
		t.Fatalf("session did not run: got %q", got)
	}
	s.stdin.Close()
	if code := s.wait(20 * time.Second); code != 1 {
		t.Fatalf("exit code %d, want 1; stderr:\n%s", code, s.stderr)
	}
	if stderr := s.stderr.String(); !strings.Contains(stderr, "ERR") || !strings.Contains(stderr, "recording is incomplete") {
		t.Errorf("the lost capture is not reported at error:\n%s", stderr)
	}
}

// TestE2ERecordTargetThatBlocks: a --record target that never takes what
// the proxy writes is never a reason not to start, not to relay and not to
// exit (R1): a FIFO nobody opens for reading, and one whose reader stops
// reading with the pipe full. The agent starts and the session runs; at
// exit the proxy waits for the target at most --kill-grace without
// progress, then gives up, logs at error how many records were not
// written, and a session that otherwise succeeded exits 1 (the recording
// is incomplete).
func TestE2ERecordTargetThatBlocks(t *testing.T) {
	tests := []struct {
		name   string
		reader bool // a reader opens the FIFO, reads a little, then stops
	}{
		{"FIFO nobody reads", false},
		{"FIFO whose reader stops reading", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fifo := filepath.Join(t.TempDir(), "capture.fifo")
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Fatal(err)
			}
			if tt.reader {
				rf, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
				if err != nil {
					t.Fatal(err)
				}
				defer rf.Close()
			}
			// The grace is also how long the capture is waited for at exit
			// once it takes nothing (R1). It must outlast the agent's own
			// exit at stdin's EOF on a loaded machine (with 1s, a race
			// build under make test was once still exiting when SIGTERM
			// came: exit 143), or the exit code says the agent's end
			// instead of the lost records.
			s := startArgs(t, script(t, "echo"), append([]string{"--kill-grace", "3s", "--record", fifo, "--modules", "none", "--"}, fakeAgentArgv(t)...))
			// Frames large enough to fill the pipe's 64 KiB several times.
			const n = 16
			pad := strings.Repeat("x", 64<<10)
			for i := range n {
				frame := `{"jsonrpc":"2.0","method":"n","params":{"i":` + strconv.Itoa(i) + `,"pad":"` + pad + `"}}`
				s.send(frame)
				if got := s.readLine(); got != frame {
					t.Fatalf("frame %d not relayed (%d bytes); stderr:\n%s", i, len(got), s.stderr)
				}
			}
			s.stdin.Close()
			if code := s.wait(60 * time.Second); code != 1 {
				t.Fatalf("exit code %d, want 1; stderr:\n%s", code, s.stderr)
			}
			stderr := s.stderr.String()
			if !strings.Contains(stderr, "ERR") || !strings.Contains(stderr, "records were not written") {
				t.Errorf("the records the target did not take are not reported at error:\n%s", stderr)
			}
		})
	}
}

// TestE2ERecordThroughLinkToAStream: a symbolic link that leads to a FIFO
// or a character device is followed (R1): the documented --record
// /dev/stderr (a link to /proc/self/fd/2, here a pipe) records there, as
// does a link to a FIFO; a link to the proxy's own stdout is refused (it
// carries frames only, F7) and the session runs without recording. A link
// to a regular file stays refused (TestE2ERecordRefusesSymlink).
func TestE2ERecordThroughLinkToAStream(t *testing.T) {
	if _, err := os.Stat("/dev/stderr"); err != nil {
		t.Skip("no /dev/stderr")
	}
	fifo := filepath.Join(t.TempDir(), "capture.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "capture.jsonl")
	if err := os.Symlink(fifo, link); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path string
		captured   func(stderr string) string // where the capture went
		refused    bool
	}{
		{"/dev/stderr", "/dev/stderr", func(stderr string) string { return stderr }, false},
		{"a link to a FIFO", link, nil, false},
		{"/dev/stdout", "/dev/stdout", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fromFIFO := make(chan string, 1)
			if tt.path == link {
				go func() {
					// Opened after the proxy starts: the proxy does not wait.
					b, _ := os.ReadFile(fifo)
					fromFIFO <- string(b)
				}()
				tt.captured = func(string) string { return <-fromFIFO }
			}
			s := start(t, script(t, "wait session/new", `out {"jsonrpc":"2.0","id":1,"result":{"sessionId":"s"}}`),
				[]string{"--record", tt.path, "--modules", "none"})
			s.send(`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{}}`)
			if got := s.readLine(); got != `{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s"}}` {
				t.Fatalf("session did not run: got %q; stderr:\n%s", got, s.stderr)
			}
			s.stdin.Close()
			if rest := s.readAll(); rest != "" {
				t.Errorf("stdout carries more than the frames: %q", rest)
			}
			if code := s.wait(20 * time.Second); code != 0 {
				t.Fatalf("exit code %d; stderr:\n%s", code, s.stderr)
			}
			stderr := s.stderr.String()
			if tt.refused {
				if !strings.Contains(stderr, "ERR") || !strings.Contains(stderr, "without recording") {
					t.Errorf("no error about the refused target on stderr:\n%s", stderr)
				}
				return
			}
			capture := tt.captured(stderr)
			for _, want := range []string{`"event":"start"`, `"method":"session/new"`, `"sessionId":"s"`, `"event":"exit","code":0`} {
				if !strings.Contains(capture, want) {
					t.Errorf("the capture lacks %s:\n%s", want, capture)
				}
			}
		})
	}
}

// TestE2ELogFileThatBlocks: a --log-file that never takes what the proxy
// writes (a FIFO nobody opens, or whose reader stops with the pipe full)
// is no reason not to start, relay or exit, as --record (F4): the agent
// starts, its 2 MB of stderr do not stall the frames, the proxy exits
// with the agent's code and says on stderr that log lines were dropped.
func TestE2ELogFileThatBlocks(t *testing.T) {
	for _, reader := range []bool{false, true} {
		name := "FIFO nobody reads"
		if reader {
			name = "FIFO whose reader stops reading"
		}
		t.Run(name, func(t *testing.T) {
			fifo := filepath.Join(t.TempDir(), "log.fifo")
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Fatal(err)
			}
			if reader {
				rf, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
				if err != nil {
					t.Fatal(err)
				}
				defer rf.Close()
			}
			s := startArgs(t, script(t, "errflood 20000", "wait session/new", `out {"jsonrpc":"2.0","id":1,"result":{"sessionId":"s"}}`),
				// A grace the agent's own exit always fits in (the log file
				// is waited for a second at exit whatever the grace).
				append([]string{"--kill-grace", "10s", "--log-file", fifo, "--log-level", "debug", "--modules", "none", "--"}, fakeAgentArgv(t)...))
			sent := make(chan struct{})
			go func() {
				defer close(sent)
				_, _ = io.WriteString(s.stdin, `{"jsonrpc":"2.0","id":1,"method":"session/new","params":{}}`+"\n")
			}()
			got := make(chan string, 1)
			go func() {
				l, _ := s.stdout.ReadString('\n')
				got <- l
			}()
			select {
			case l := <-got:
				if l != `{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s"}}`+"\n" {
					t.Fatalf("got %q; stderr:\n%.2000s", l, s.stderr)
				}
			case <-time.After(60 * time.Second): // a hang detector, not a timing assertion
				t.Fatal("the session stalled behind its log file")
			}
			<-sent
			s.stdin.Close()
			if code := s.wait(60 * time.Second); code != 0 {
				t.Fatalf("exit code %d; stderr:\n%.2000s", code, s.stderr)
			}
			if !strings.Contains(s.stderr.String(), "--log-file was not being read") {
				t.Errorf("nothing said about the log lines the file did not take:\n%.3000s", s.stderr.String()[max(0, s.stderr.Len()-3000):])
			}
		})
	}
}

// TestE2ERecordFIFOReaderComesLate: a FIFO that nobody has opened for
// reading when the session starts (R1: the agent starts at once) gets
// the whole capture once a reader opens it, late in the session: every
// record, in order (seq 1, 2, ... with no gap and no "dropped"), the
// start event first and the exit last, and the proxy exits 0.
func TestE2ERecordFIFOReaderComesLate(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "capture.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	s := start(t, script(t, "echo"), []string{"--record", fifo, "--modules", "none"})
	// More than a pipe holds: the reader that comes finds the queue full.
	const n = 32
	pad := strings.Repeat("x", 8<<10)
	for i := range n {
		frame := `{"jsonrpc":"2.0","method":"n","params":{"i":` + strconv.Itoa(i) + `,"pad":"` + pad + `"}}`
		s.send(frame)
		if got := s.readLine(); got != frame {
			t.Fatalf("frame %d not relayed while the FIFO has no reader (%d bytes); stderr:\n%s", i, len(got), s.stderr)
		}
	}
	// The reader comes: the capture's goroutine, waiting in its open,
	// goes on.
	captured := make(chan []byte, 1)
	go func() {
		b, _ := os.ReadFile(fifo)
		captured <- b
	}()
	s.stdin.Close()
	if code := s.wait(60 * time.Second); code != 0 {
		t.Fatalf("exit code %d; stderr:\n%s", code, s.stderr)
	}
	lines := strings.Split(strings.TrimSuffix(string(<-captured), "\n"), "\n")
	next := map[string]int{} // the next frame's i, per side
	for k, l := range lines {
		var rec struct {
			Seq   int    `json:"seq"`
			Event string `json:"event"`
			From  string `json:"from"`
			Frame struct {
				Params struct {
					I int `json:"i"`
				} `json:"params"`
			} `json:"frame"`
		}
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatalf("capture line %d %.100q: %v", k+1, l, err)
		}
		if rec.Seq != k+1 {
			t.Fatalf("capture line %d has seq %d: records lost or out of order", k+1, rec.Seq)
		}
		switch {
		case rec.Event == "dropped":
			t.Fatalf("capture line %d: records were dropped", k+1)
		case rec.From != "":
			if rec.Frame.Params.I != next[rec.From] {
				t.Fatalf("capture line %d: frame %d from the %s, want %d", k+1, rec.Frame.Params.I, rec.From, next[rec.From])
			}
			next[rec.From]++
		}
	}
	if next["client"] != n || next["agent"] != n {
		t.Errorf("the capture has %d client and %d agent frames, want %d each", next["client"], next["agent"], n)
	}
	if !strings.Contains(lines[0], `"event":"start"`) || !strings.Contains(lines[len(lines)-1], `"event":"exit","code":0`) {
		t.Errorf("the capture does not begin with start and end with exit 0:\n%.200s\n...\n%.200s", lines[0], lines[len(lines)-1])
	}
}

// TestE2ERecordTargetThatIsNoFile: a --record path that can hold no
// capture (a directory, a Unix socket, which open(2) refuses with "no
// such device or address") is a usage error (exit 2) in one line that
// says what the path is; the agent is not started.
func TestE2ERecordTargetThatIsNoFile(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "s.sock")
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	if err := syscall.Bind(fd, &syscall.SockaddrUnix{Name: sock}); err != nil {
		t.Skipf("no Unix socket here: %v", err)
	}
	for _, tt := range []struct {
		name, path, want string
	}{
		{"a directory", dir, "is a directory"},
		{"a socket", sock, "is a socket"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runBinary(t, "--record", tt.path, "--modules", "none", "--", "sh", "-c", "echo started >&2")
			if code != exitUsage || stdout != "" {
				t.Fatalf("exit %d, stdout %q; want exit 2 and nothing on stdout; stderr %q", code, stdout, stderr)
			}
			lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
			if len(lines) != 1 || !strings.HasPrefix(lines[0], "acp-normalize: --record: ") || !strings.Contains(lines[0], tt.want) {
				t.Errorf("stderr %q: want one --record line saying the path %s", stderr, tt.want)
			}
		})
	}
}

// TestE2ELogFileRefusesProtocolStreams: --log-file on the proxy's own
// stdout or stdin (pipes or files, as --record refuses them, R1) is a
// usage error: log lines written there went into the frames to the
// client (F7), or were appended to the client's input and read back as
// its frames. /dev/stderr stays a log file.
func TestE2ELogFileRefusesProtocolStreams(t *testing.T) {
	if _, err := os.Stat("/dev/stdout"); err != nil {
		t.Skip("no /dev/stdout")
	}
	const frame = `{"jsonrpc":"2.0","id":1,"method":"session/new","params":{}}`
	for _, tt := range []struct {
		name, path string
		refused    bool
	}{
		{"/dev/stdout", "/dev/stdout", true},
		{"/dev/stdin", "/dev/stdin", true},
		{"/dev/stderr", "/dev/stderr", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := filepath.Join(t.TempDir(), "in.jsonl")
			if err := os.WriteFile(in, []byte(frame+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			stdin, err := os.Open(in)
			if err != nil {
				t.Fatal(err)
			}
			defer stdin.Close()
			cmd := exec.Command(proxyBinary, append([]string{"--log-file", tt.path, "--log-level", "debug", "--modules", "none", "--"}, fakeAgentArgv(t)...)...)
			cmd.Env = append(os.Environ(), "NO_COLOR=1", envFakeAgent+"="+script(t, "wait session/new", `out {"jsonrpc":"2.0","id":1,"result":{"sessionId":"s"}}`))
			var stdout, stderr bytes.Buffer
			cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, &stdout, &stderr
			err = cmd.Run()
			code := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if got, _ := os.ReadFile(in); string(got) != frame+"\n" {
				t.Errorf("the client's input was written to:\n%s", got)
			}
			if tt.refused {
				if code != exitUsage || stdout.Len() != 0 || !strings.Contains(stderr.String(), "--log-file: "+tt.path+" is the proxy's own stdin or stdout") {
					t.Errorf("exit %d, stdout %q, stderr %q; want exit 2, nothing on stdout, the refusal", code, stdout.String(), stderr.String())
				}
				return
			}
			if code != 0 || stdout.String() != `{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s"}}`+"\n" {
				t.Errorf("exit %d, stdout %q; want 0 and the one answer; stderr %q", code, stdout.String(), stderr.String())
			}
			if !strings.Contains(stderr.String(), "level=DEBUG") {
				t.Errorf("no log file lines on stderr:\n%s", stderr.String())
			}
		})
	}
}

// TestE2ERecordIsNotTheLogFile: --record naming the --log-file (the same
// path, or another name of the file) is refused at error level and the
// session runs without recording, as for the other refused targets (R1):
// the capture would truncate the log (lines of earlier sessions lost) and
// the two would be written over each other.
func TestE2ERecordIsNotTheLogFile(t *testing.T) {
	for _, tt := range []struct {
		name string
		link bool // --record names a hard link to the log file
	}{
		{"the same path", false},
		{"a hard link", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			logFile := filepath.Join(dir, "acp.log")
			if err := os.WriteFile(logFile, []byte("an earlier session's line\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			record := logFile
			if tt.link {
				record = filepath.Join(dir, "capture.jsonl")
				if err := os.Link(logFile, record); err != nil {
					t.Skipf("no hard links here: %v", err)
				}
			}
			s := start(t, script(t, "wait session/new", `out {"jsonrpc":"2.0","id":1,"result":{"sessionId":"s"}}`),
				[]string{"--record", record, "--log-file", logFile, "--log-level", "debug", "--modules", "none"})
			s.send(`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{}}`)
			if got := s.readLine(); got != `{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s"}}` {
				t.Fatalf("session did not run: got %q; stderr:\n%s", got, s.stderr)
			}
			s.stdin.Close()
			if code := s.wait(20 * time.Second); code != 0 {
				t.Fatalf("exit code %d; stderr:\n%s", code, s.stderr)
			}
			if stderr := s.stderr.String(); !strings.Contains(stderr, "ERR") || !strings.Contains(stderr, "is the --log-file") {
				t.Errorf("no error about the refused target on stderr:\n%s", stderr)
			}
			got, err := os.ReadFile(logFile)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(string(got), "an earlier session's line\n") || strings.Contains(string(got), `"event":"start"`) || !strings.Contains(string(got), "level=DEBUG") {
				t.Errorf("the log file lost its lines or holds a capture:\n%s", got)
			}
		})
	}
}

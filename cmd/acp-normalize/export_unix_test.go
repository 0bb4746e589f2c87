//go:build unix

package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
)

// headerAt is the export time in a trace's header, the one field two
// exports of one capture differ in.
var headerAt = regexp.MustCompile(`^(\{"type":"header",[^\n]*?"at":)\d+`)

// sameTrace says whether two traces are the same but for their export times.
func sameTrace(a, b string) bool {
	return headerAt.ReplaceAllString(a, "${1}0") == headerAt.ReplaceAllString(b, "${1}0")
}

// emptyDir fails the test if dir holds anything (a copy of a capture).
func emptyDir(t *testing.T, dir string) {
	t.Helper()
	if left, err := os.ReadDir(dir); err != nil || len(left) > 0 {
		t.Errorf("%s holds %v (%v): export left a copy of the session behind", dir, left, err)
	}
}

// TestExportStdinLeavesNoCopy: export reads its capture twice (F3: a
// frame at a time), so stdin that is a pipe is kept in a temporary file;
// that file holds a session (R1: captures are private), and no way out
// of export leaves it behind: not a SIGKILL while stdin is still being
// read (no handler runs then: the file has no name while it is read),
// not a failing stdin, not a normal run, whose trace is the trace of the
// capture's file.
func TestExportStdinLeavesNoCopy(t *testing.T) {
	capture := filepath.Join("testdata", "mock-session.jsonl")
	data, err := os.ReadFile(capture)
	if err != nil {
		t.Fatal(err)
	}
	start := func(t *testing.T, tmp string, stdout io.Writer, args ...string) (*exec.Cmd, io.WriteCloser) {
		cmd := exec.Command(proxyBinary, args...)
		cmd.Env = append(os.Environ(), "TMPDIR="+tmp, "NO_COLOR=1")
		cmd.Stdout = stdout
		in, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd, in
	}

	t.Run("sigkill_while_reading_stdin", func(t *testing.T) {
		tmp := t.TempDir()
		cmd, in := start(t, tmp, io.Discard, "export", "-")
		// Once 1 MiB went into the pipe (it holds 64 KiB), export has
		// made its temporary file and is copying stdin into it.
		chunk := bytes.Repeat([]byte(strings.TrimSuffix(string(data), "\n")+"\n"), 1+(1<<20)/len(data))
		if _, err := in.Write(chunk); err != nil {
			t.Fatal(err)
		}
		if err := cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		cmd.Wait()
		in.Close()
		emptyDir(t, tmp)
	})

	t.Run("pipe_is_the_file", func(t *testing.T) {
		tmp := t.TempDir()
		var out bytes.Buffer
		cmd, in := start(t, tmp, &out, "export", "-")
		if _, err := in.Write(data); err != nil {
			t.Fatal(err)
		}
		in.Close()
		if err := cmd.Wait(); err != nil {
			t.Fatal(err)
		}
		code, want, stderr := runBinary(t, "export", capture)
		if code != 0 || !sameTrace(out.String(), want) {
			t.Errorf("export - of a pipe:\n%s\nexport FILE (exit %d, %s):\n%s", out.String(), code, stderr, want)
		}
		emptyDir(t, tmp)
	})

	t.Run("stdin_fails", func(t *testing.T) {
		tmp := t.TempDir()
		t.Setenv("TMPDIR", tmp)
		var stdout, stderr bytes.Buffer
		stdin := io.MultiReader(bytes.NewReader(data), iotestErrReader{errors.New("the editor went away")})
		code := run([]string{"acp-normalize", "export", "-"}, stdin, &stdout, &stderr)
		if code != exitFailure || stdout.Len() > 0 || !strings.Contains(stderr.String(), "export: reading stdin: the editor went away") {
			t.Errorf("exit %d, stdout %q, stderr %s", code, stdout.String(), stderr.String())
		}
		emptyDir(t, tmp)
	})
}

type iotestErrReader struct{ err error }

func (r iotestErrReader) Read([]byte) (int, error) { return 0, r.err }

// TestExportUnseekableCapture: a capture named by a path that is a pipe
// (bash's `export <(zcat capture.jsonl.gz)`, a FIFO) exports as its file
// does, though export reads a capture twice.
func TestExportUnseekableCapture(t *testing.T) {
	capture := filepath.Join("testdata", "mock-session.jsonl")
	data, err := os.ReadFile(capture)
	if err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(t.TempDir(), "capture.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	wrote := make(chan error, 1)
	go func() {
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err == nil {
			_, err = f.Write(data)
			err = errors.Join(err, f.Close())
		}
		wrote <- err
	}()
	code, got, stderr := runBinary(t, "export", fifo)
	if err := <-wrote; err != nil {
		t.Fatal(err)
	}
	_, want, _ := runBinary(t, "export", capture)
	if code != 0 || !sameTrace(got, want) {
		t.Errorf("export FIFO: exit %d, stderr %s\n%s\nwant\n%s", code, stderr, got, want)
	}
}

// TestExportStdinFile: stdin that is a regular file is read in place from
// where it stands (what a shell that read a line of it left), and -o
// naming that same file is refused as it is for a named capture: the
// trace would truncate the capture before it was read again.
func TestExportStdinFile(t *testing.T) {
	dir := t.TempDir()
	capture := filepath.Join("testdata", "mock-session.jsonl")
	data, err := os.ReadFile(capture)
	if err != nil {
		t.Fatal(err)
	}
	first, rest, _ := bytes.Cut(data, []byte("\n"))
	restPath := filepath.Join(dir, "rest.jsonl")
	if err := os.WriteFile(restPath, rest, 0o600); err != nil {
		t.Fatal(err)
	}
	stdinPath := filepath.Join(dir, "stdin.jsonl")
	if err := os.WriteFile(stdinPath, data, 0o600); err != nil {
		t.Fatal(err)
	}
	stdin, err := os.Open(stdinPath)
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	if _, err := stdin.Seek(int64(len(first)+1), io.SeekStart); err != nil {
		t.Fatal(err)
	}
	var got, stderr bytes.Buffer
	code := run([]string{"acp-normalize", "export", "-"}, stdin, &got, &stderr)
	_, want, _ := runCLI(t, "", "export", restPath)
	if code != 0 || !sameTrace(got.String(), want) {
		t.Errorf("export - < file past its first line: exit %d, stderr %s\n%s\nwant the trace of the rest\n%s", code, stderr.String(), got.String(), want)
	}

	stderr.Reset()
	code = run([]string{"acp-normalize", "export", "-o", stdinPath, "-"}, stdin, io.Discard, &stderr)
	if b, _ := os.ReadFile(stdinPath); code != exitUsage || !bytes.Equal(b, data) || !strings.Contains(stderr.String(), "is the capture being exported") {
		t.Errorf("export -o FILE - < FILE: exit %d, capture kept %v, stderr %s", code, bytes.Equal(b, data), stderr.String())
	}
}

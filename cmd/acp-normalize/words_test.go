package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// runBinary runs the real binary with args and returns its exit code,
// stdout and stderr.
func runBinary(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(proxyBinary, args...)
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return ee.ExitCode(), out.String(), errb.String()
	case err != nil:
		t.Fatal(err)
	}
	return 0, out.String(), errb.String()
}

// TestE2EWords: help and version work as words before "--", and after
// "--" every word is the agent's.
func TestE2EWords(t *testing.T) {
	t.Parallel()
	versionLine := "acp-normalize " + binaryVersion(t, proxyBinary) + " ("
	tests := []struct {
		name       string
		args       []string
		code       int
		stdout     string // a substring of stdout
		stderrLine string // a substring of the one stderr line, when code != 0
	}{
		{"help", []string{"help"}, 0, "acp-normalize [flags] -- AGENT [ARGS...]", ""},
		{"help of a command", []string{"help", "probe"}, 0, "acp-normalize probe [command options] -- AGENT [ARGS...]", ""},
		{"help of no command", []string{"help", "nope"}, 2, "", `help: no command 'nope' (probe, replay, export, check, mock-agent, version, help)`},
		{"--help", []string{"--help"}, 0, "COMMANDS:", ""},
		{"version", []string{"version"}, 0, versionLine, ""},
		{"--version", []string{"--version"}, 0, versionLine, ""},
		{"-v", []string{"-v"}, 0, versionLine, ""},
		{"version with flags before it", []string{"--log-level", "debug", "version"}, 0, versionLine, ""},
		{"version --json", []string{"version", "--json"}, 0, `"version": "`, ""},
		{"version with an argument", []string{"version", "x"}, 2, "", `version: takes no arguments`},
		{"help after -- is the agent", []string{"--", "help"}, 2, "", `agent "help" not found`},
		{"version after -- is the agent", []string{"--", "version"}, 2, "", `agent "version" not found`},
		{"probe after -- is the agent", []string{"--", "probe", "--", "x"}, 2, "", `agent "probe" not found`},
		{"no agent, no command, no handshake", nil, 2, "", "no agent command, and the client sent nothing"}, // K3
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			code, stdout, stderr := runBinary(t, tt.args...)
			if code != tt.code || !strings.Contains(stdout, tt.stdout) {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit %d, stdout with %q", code, stdout, stderr, tt.code, tt.stdout)
			}
			if tt.code != 0 && (strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tt.stderrLine)) {
				t.Fatalf("stderr %q: want one line with %q", stderr, tt.stderrLine)
			}
		})
	}
}

// TestE2EAgentNamedLikeAWord: "acp-normalize -- help" runs an agent named
// help (found on PATH), never the help command.
func TestE2EAgentNamedLikeAWord(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, word := range []string{"help", "version", "probe"} {
		if err := os.WriteFile(filepath.Join(dir, word), []byte("#!/bin/sh\necho \"$0 ran\" >&2\nexit 7\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, word := range []string{"help", "version", "probe"} {
		cmd := exec.Command(proxyBinary, "--", word)
		cmd.Env = append(os.Environ(), "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"))
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 7 || !strings.Contains(string(out), word+" ran") {
			t.Errorf("-- %s: %v, output %q; want the agent's exit 7", word, err, out)
		}
	}
}

// TestE2ESubcommandUsageErrors: a usage mistake in any subcommand is one
// line on stderr and exit status 2, as at the top level; a mock-agent file
// with no frames is one line and exit status 1.
func TestE2ESubcommandUsageErrors(t *testing.T) {
	t.Parallel()
	empty := filepath.Join(t.TempDir(), "empty.jsonl")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"replay bad flag", []string{"replay", "--bogus", "x"}, 2, "replay: unknown flag --bogus (see acp-normalize replay --help)"},
		{"mock-agent bad flag", []string{"mock-agent", "--bogus", "x"}, 2, "mock-agent: unknown flag --bogus"},
		{"probe bad flag", []string{"probe", "--bogus", "--", "x"}, 2, "probe: unknown flag --bogus"},
		{"version bad flag", []string{"version", "--bogus"}, 2, "version: unknown flag --bogus"},
		{"help bad flag", []string{"help", "--bogus"}, 2, "help: unknown flag --bogus"},
		{"replay bad flag value", []string{"replay", "--timeout-nope=1", "x"}, 2, "replay: unknown flag --timeout-nope"},
		{"probe without agent", []string{"probe"}, 2, "probe: no agent command given"},
		{"probe bad timeout", []string{"probe", "--timeout", "soon", "--", "x"}, 2, `probe: --timeout: invalid value "soon": want a duration such as 3s or 500ms`},
		{"export flag without its value", []string{"export", "-o"}, 2, "export: -o needs a value (see acp-normalize export --help)"},
		{"mock-agent without capture", []string{"mock-agent"}, 2, "mock-agent: give exactly one capture"},
		{"mock-agent on a file that is no capture", []string{"mock-agent", "../../README.md"}, 1,
			"mock-agent: ../../README.md: no frames in it, "},
		{"mock-agent on an empty file", []string{"mock-agent", empty}, 1, "no frames in it: not a capture"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			code, stdout, stderr := runBinary(t, tt.args...)
			if code != tt.code || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tt.want) {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit %d and one stderr line with %q", code, stdout, stderr, tt.code, tt.want)
			}
		})
	}
}

// TestCaptureNameMistakes: a capture named on the command line that does
// not exist or is a directory is a usage mistake for every command that
// reads captures: one line, exit 2 (README: "a usage mistake in any of
// them is one line on stderr and exit status 2"), nothing on stdout, no
// capture replayed half-way. replay once skipped it with exit 1 after
// replaying the rest, while check and export exited 2.
func TestCaptureNameMistakes(t *testing.T) {
	dir := t.TempDir()
	for _, cmd := range [][]string{{"replay"}, {"replay", "--format", "html"}, {"check"}, {"export"}, {"mock-agent"}} {
		for _, tt := range []struct {
			name, capture, want string
		}{
			{"missing", filepath.Join(dir, "no-such.jsonl"), ": no such file or directory"},
			{"directory", dir, ": is a directory, not a capture"},
			// A flag after the capture is read as a capture's name.
			{"flag_after_capture", "--modules", "--modules: no such file or directory (flags go before the capture names)"},
		} {
			args := append(slices.Clone(cmd), tt.capture)
			if cmd[0] == "replay" || cmd[0] == "check" {
				args = append(slices.Clone(cmd), "testdata/mock-session.jsonl", tt.capture)
			} else if tt.name == "flag_after_capture" {
				continue // one capture: a second word is a usage error of its own
			}
			t.Run(strings.Join(cmd, "_")+"/"+tt.name, func(t *testing.T) {
				code, stdout, stderr := runCLI(t, "", args...)
				if code != exitUsage || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "acp-normalize: "+cmd[0]+": ") || !strings.Contains(stderr, tt.want) {
					t.Errorf("%v: exit %d (want %d), stdout %.80q, stderr %q (want one line with %q)", args, code, exitUsage, stdout, stderr, tt.want)
				}
			})
		}
	}
}

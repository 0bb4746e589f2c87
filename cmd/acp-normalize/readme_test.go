package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
	"github.com/acp-normalize/acp-normalize/pipe"
)

// readmeClone is the clone's path as the README writes it in editor
// settings: the reader puts their own.
const readmeClone = "/home/you/src/acp-normalize"

// readmeFirstScreen is the README up to its first section after the
// quick start: what a reader sees first.
func readmeFirstScreen(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	i := strings.Index(readme, "\n## What you get")
	if i < 0 {
		t.Fatal(`README.md: no "## What you get" after the quick start`)
	}
	return readme[:i]
}

// fencedBlocks returns the fenced code blocks of lang in markdown text.
func fencedBlocks(text, lang string) []string {
	re := regexp.MustCompile("(?ms)^```" + regexp.QuoteMeta(lang) + "\n(.*?)^```")
	var blocks []string
	for _, m := range re.FindAllStringSubmatch(text, -1) {
		blocks = append(blocks, m[1])
	}
	return blocks
}

// TestReadmeQuickStart keeps the README's first screen true: it says
// "not released yet" exactly while CHANGELOG.md has no released version,
// offers no install route that does not work yet, and runs here as
// written: `make build`, `make install` (into a temporary GOBIN), `make
// demo`, and the Zed block's command with the mock agent the README
// offers in place of Cursor, started as an editor starts it and spoken to
// as an editor speaks. `make test` is the command that runs this test;
// the probe needs a real agent: neither is run.
func TestReadmeQuickStart(t *testing.T) {
	t.Parallel()
	screen := readmeFirstScreen(t)

	changelog, err := os.ReadFile(filepath.Join(repoRoot, "CHANGELOG.md"))
	if err != nil {
		t.Fatal(err)
	}
	released := regexp.MustCompile(`(?m)^## \[\d+\.\d+\.\d+`).Match(changelog)
	if says := strings.Contains(screen, "Not released yet"); says == released {
		t.Errorf("README.md's first screen says \"Not released yet\": %v; CHANGELOG.md has a released version: %v (docs/releasing.md, Cutting a release)", says, released)
	}
	if !released {
		for _, route := range []string{"npx", "go install", "releases page", "npm install"} {
			if strings.Contains(screen, route) {
				t.Errorf("README.md's first screen offers %q, which installs nothing before a release", route)
			}
		}
	}

	// The two commands, exactly.
	sh := fencedBlocks(screen, "sh")
	var commands []string
	for _, block := range sh {
		for _, line := range strings.Split(block, "\n") {
			if cmd, _, _ := strings.Cut(line, "#"); strings.TrimSpace(cmd) != "" {
				commands = append(commands, strings.TrimSpace(cmd))
			}
		}
	}
	if strings.Join(commands, "; ") != "make demo; make test" {
		t.Errorf("README.md's first screen runs %q, want exactly make demo and make test", commands)
	}
	if !strings.Contains(screen, "`make build`") || !strings.Contains(screen, "`make install`") || !strings.Contains(screen, "`bin/acp-normalize`") {
		t.Error("README.md's first screen does not say to make build (or make install) and use bin/acp-normalize")
	}

	// One Zed block: the built binary's absolute path, the agent after "--".
	blocks := fencedBlocks(screen, "json")
	if len(blocks) != 1 {
		t.Fatalf("README.md's first screen has %d JSON blocks, want the one Zed block", len(blocks))
	}
	var zed struct {
		AgentServers map[string]struct {
			Type, Command string
			Args          []string
			Env           map[string]string
		} `json:"agent_servers"`
	}
	if err := json.Unmarshal([]byte("{"+blocks[0]+"}"), &zed); err != nil {
		t.Fatalf("the Zed block is not a settings.json member: %v\n%s", err, blocks[0])
	}
	if len(zed.AgentServers) != 1 {
		t.Fatalf("the Zed block has %d agent servers, want 1", len(zed.AgentServers))
	}
	makefile, err := os.ReadFile(filepath.Join(repoRoot, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	bin := regexp.MustCompile(`(?m)^BIN\s*\?=\s*(\S+)`).FindSubmatch(makefile)
	if bin == nil {
		t.Fatal("Makefile: no BIN")
	}
	var command string
	for name, s := range zed.AgentServers {
		if s.Type != "custom" || s.Command != readmeClone+"/"+string(bin[1]) || len(s.Args) < 2 || s.Args[0] != "--" {
			t.Errorf("Zed block %q: type %q, command %q, args %q; want custom, %s/%s (what make build writes), \"--\" and the agent", name, s.Type, s.Command, s.Args, readmeClone, bin[1])
		}
		command = s.Command
	}
	// The agent for those without one: the README's args, as JSON.
	m := regexp.MustCompile("`\"args\": (\\[[^`]*mock-agent[^`]*\\])`").FindStringSubmatch(strings.Join(strings.Fields(screen), " "))
	if m == nil {
		t.Fatal("README.md's first screen offers no mock-agent args for those without an agent")
	}
	var mockArgs []string
	if err := json.Unmarshal([]byte(m[1]), &mockArgs); err != nil {
		t.Fatalf("the mock-agent args %s: %v", m[1], err)
	}

	if testing.Short() {
		t.Skip("-short: the README's commands are not run")
	}
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make: the README's commands are not run")
	}
	// The clone as the reader has it after make build: the binary where
	// the README puts it, the repository's testdata beside it.
	clone := t.TempDir()
	testdata, err := filepath.Abs(filepath.Join(repoRoot, "testdata"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(testdata, filepath.Join(clone, "testdata")); err != nil {
		t.Fatal(err)
	}
	builtBin := filepath.Join(clone, filepath.FromSlash(string(bin[1])))
	gobin := filepath.Join(clone, "gobin")
	runMake := func(target string, env ...string) string {
		t.Helper()
		cmd := exec.Command("make", "--no-print-directory", target)
		cmd.Dir = repoRoot
		cmd.Env = append(append(os.Environ(), "BIN="+builtBin, "DEMO_HTML="+filepath.Join(clone, "demo.html"), "MAKEFLAGS=", "MAKELEVEL="), env...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("make %s: %v\n%s", target, err, out)
		}
		return string(out)
	}
	runMake("build")
	if out, err := exec.Command(builtBin, "--version").Output(); err != nil || !strings.HasPrefix(string(out), "acp-normalize ") {
		t.Errorf("make build: %s --version: %q, %v", builtBin, out, err)
	}
	runMake("install", "GOBIN="+gobin)
	if out, err := exec.Command(filepath.Join(gobin, "acp-normalize"), "--version").Output(); err != nil || !strings.HasPrefix(string(out), "acp-normalize ") {
		t.Errorf("make install: acp-normalize --version in GOBIN: %q, %v", out, err)
	}
	demo := runMake("demo")
	for _, want := range []string{"Replaying testdata/captures/", "cursor/task #0", "↩ replied", "In a browser:"} {
		if !strings.Contains(demo, want) {
			t.Errorf("make demo says no %q:\n%s", want, demo)
		}
	}
	if html, err := os.ReadFile(filepath.Join(clone, "demo.html")); err != nil || !bytes.Contains(html, []byte("acp-normalize")) {
		t.Errorf("make demo wrote no viewer page: %v", err)
	}

	// The Zed block's command, with the mock agent as the agent.
	local := func(s string) string { return strings.ReplaceAll(s, readmeClone, clone) }
	args := make([]string, len(mockArgs))
	for i, a := range mockArgs {
		args[i] = local(a)
	}
	editorSession(t, local(command), args)
}

// editorSession starts command with args as an editor does and speaks
// ACP to it: initialize, a session, a prompt answered, then its stdin
// closed and its exit awaited. The proxy must have advertised itself.
func editorSession(t *testing.T, command string, args []string) {
	t.Helper()
	cmd := exec.Command(command, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdin, stdout := startPiped(t, cmd)
	for _, f := range []string{
		`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{},"clientInfo":{"name":"zed","version":"0.212.4"}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}`,
		`{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s","prompt":[{"type":"text","text":"hello"}]}}`,
	} {
		if _, err := io.WriteString(stdin, f+"\n"); err != nil {
			t.Fatalf("writing to %s: %v", command, err)
		}
	}
	sc := bufio.NewScanner(stdout)
	sc.Buffer(nil, 16<<20)
	advertised, answered := false, false
	for !answered && sc.Scan() {
		env := pipe.Peek(sc.Bytes())
		if env.Kind == pipe.Response && string(env.ID) == "0" {
			_, advertised = rawjson.Lookup(sc.Bytes(), "result", "agentCapabilities", "_meta", "acp-normalize", "modules")
		}
		answered = env.Kind == pipe.Response && string(env.ID) == "2"
	}
	_ = stdin.Close()
	err := cmd.Wait()
	if err != nil || !answered || !advertised {
		t.Errorf("%s %q as an editor starts it: exit %v, prompt answered %v, initialize advertised acp-normalize %v; stderr:\n%s",
			command, args, err, answered, advertised, stderr.String())
	}
}

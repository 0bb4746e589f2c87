package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/acp-normalize/acp-normalize/proxy"
)

// envRunMain makes the test binary run the command itself, so that tests
// can start it as a process (the mock agent behind a proxy, say).
const envRunMain = "ACP_NORMALIZE_TEST_RUN_MAIN"

// envFakeAgent makes the test binary run a scripted fake agent (see
// fakeAgent) from the script file it names.
const envFakeAgent = "ACPN_FAKE_AGENT"

// captureFiles lists the whole-session captures under testdata/captures
// matching pattern (e.g. "cursor/*.jsonl"), leaving out the
// *.replay.jsonl replay goldens that sit beside the Cursor captures.
func captureFiles(t testing.TB, pattern string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "testdata", "captures", pattern))
	if err != nil {
		t.Fatal(err)
	}
	return slices.DeleteFunc(files, func(f string) bool { return strings.HasSuffix(f, ".replay.jsonl") })
}

// proxyBinary is the real acp-normalize binary, built once by TestMain for
// the end-to-end tests.
var proxyBinary string

func TestMain(m *testing.M) {
	// proxy.Run in this test binary re-executes it as the subreaper.
	if code, ok := proxy.SubreaperMain(); ok {
		os.Exit(code)
	}
	if os.Getenv(envRunMain) == "1" {
		os.Exit(runMain(os.Args, os.Stdin, os.Stdout, os.Stderr))
	}
	if script := os.Getenv(envFakeAgent); script != "" {
		os.Exit(fakeAgent(script))
	}
	if os.Getenv(cursorFakeAgentEnv) == "1" {
		os.Exit(cursorFakeAgent(os.Stdin, os.Stdout, os.Stderr))
	}
	dir, err := os.MkdirTemp("", "acpn-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	proxyBinary = filepath.Join(dir, "acp-normalize")
	if runtime.GOOS == "windows" {
		proxyBinary += ".exe"
	}
	build := exec.Command("go", "build", "-o", proxyBinary, ".")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building acp-normalize:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

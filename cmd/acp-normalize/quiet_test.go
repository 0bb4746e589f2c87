//go:build unix

package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestDefaultLevelQuietPerAgent: a normal session with any of the six
// agents puts nothing of the proxy's on stderr at the default log level:
// editors such as Emacs agent-shell show the agent's stderr,
// ours included, to the user, and a vendor quirk the proxy handled
// (Cursor's cursor/report_usage, Qwen's craft/drainMidTurnQueue answered
// -32601, rules C13, V7) is nothing the user must act on. Every bundled
// capture of every vendor is served by the mock agent (its recorded agent
// stderr not replayed: that is the agent's, not ours) to the real binary
// started with no flags but "--", as an editor config does; the client
// plays the capture's client side.
func TestDefaultLevelQuietPerAgent(t *testing.T) {
	vendors := map[string]int{}
	for _, capture := range captureFiles(t, "*/*.jsonl") {
		vendor := filepath.Base(filepath.Dir(capture))
		vendors[vendor]++
		t.Run(vendor+"/"+filepath.Base(capture), func(t *testing.T) {
			t.Parallel()
			c := startLive(t, nil, "--", proxyBinary, "mock-agent", "--no-stderr", capture)
			playClient(t, c, capture)
			c.finish(true)
			if got := c.err.String(); got != "" {
				t.Errorf("stderr at the default level:\n%s", got)
			}
			if code := c.cmd.ProcessState.ExitCode(); code != 0 {
				t.Errorf("exit code %d", code)
			}
		})
	}
	for _, v := range []string{"cursor", "claude", "codex", "gemini", "qwen", "opencode"} {
		if vendors[v] == 0 {
			t.Errorf("no bundled capture of %s (have %v)", v, vendors)
		}
	}
}

// TestQuirksLoggedOnceAtInfo: the handled quirks are still there for whoever
// asks (--log-level info), once per method (C13, V7).
func TestQuirksLoggedOnceAtInfo(t *testing.T) {
	tests := []struct {
		capture string
		want    []string
	}{
		{"cursor/background-and-question.jsonl", []string{"INF unknown Cursor method answered by the proxy", "method=cursor/report_usage"}},
		{"qwen/permission.jsonl", []string{"INF agent request no client knows answered -32601", "method=craft/drainMidTurnQueue",
			"INF agent notification no client knows dropped", "method=qwen/notify/session/mode-update"}},
	}
	for _, tt := range tests {
		t.Run(tt.capture, func(t *testing.T) {
			t.Parallel()
			capture := filepath.Join("..", "..", "testdata", "captures", tt.capture)
			c := startLive(t, nil, "--log-level", "info", "--", proxyBinary, "mock-agent", "--no-stderr", capture)
			playClient(t, c, capture)
			c.finish(true)
			got := c.err.String()
			for _, w := range tt.want {
				if strings.Count(got, w) != 1 {
					t.Errorf("stderr has %q %d times, want once:\n%s", w, strings.Count(got, w), got)
				}
			}
			if strings.Contains(got, " WRN ") {
				t.Errorf("a warning for a handled quirk:\n%s", got)
			}
		})
	}
}

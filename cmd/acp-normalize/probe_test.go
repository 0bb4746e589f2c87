//go:build unix

package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite"
)

// probeRun runs `acp-normalize probe ARGS` with extra environment.
func probeRun(t *testing.T, env []string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(proxyBinary, append([]string{"probe"}, args...)...)
	cmd.Env = append(append(os.Environ(), "NO_COLOR=1"), env...)
	var out, errb lockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, out.String(), errb.String()
}

func decodeProbe(t *testing.T, out string) probeReport {
	t.Helper()
	var rep probeReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("probe --json printed no report: %v\n%s", err, out)
	}
	return rep
}

func moduleState(rep probeReport) map[string]string {
	m := map[string]string{}
	for _, v := range rep.Modules {
		m[v.Name] = v.State
	}
	return m
}

// TestProbeMockAgents probes the mock agent serving one bundled capture of
// each vendor: who the agent is, which module acts on it and why (V1),
// native subagent sessions, auth methods, the vendor methods it sent and
// what the proxy did with them; exit status 0.
func TestProbeMockAgents(t *testing.T) {
	tests := []struct {
		capture     string
		agent       string
		acts        []string // modules acting by name (V1)
		native      bool
		auth        []string
		methods     []string // method: handling (a prefix)
		textHas     []string
		noAgentInfo bool
	}{
		{capture: "qwen/foreground.jsonl", agent: "qwen-code", acts: []string{"qwen"}, auth: []string{"openai"},
			textHas: []string{`qwen: agentInfo.name "qwen-code" is its agent's (V1)`, "off for this agent: codex, gemini, opencode"}},
		{capture: "codex/foreground.jsonl", agent: "@agentclientprotocol/codex-acp", acts: []string{"codex"}, native: true,
			auth: []string{"api-key", "chat-gpt"}, methods: []string{"_auth/status_update: forwarded to the client"},
			textHas: []string{"native subagent sessions advertised"}},
		{capture: "claude/rig-foreground.jsonl", agent: "@agentclientprotocol/claude-agent-acp", acts: []string{"claude"},
			methods: []string{"_auth/status_update: forwarded to the client"}, textHas: []string{"it checks no name"}},
		{capture: "gemini/generalist.jsonl", agent: "gemini-cli", acts: []string{"gemini"},
			auth: []string{"oauth-personal", "gemini-api-key", "vertex-ai", "gateway"}},
		{capture: "opencode/foreground.jsonl", agent: "OpenCode", acts: []string{"opencode"}, auth: []string{"opencode-login"}},
		{capture: "cursor/subagent-foreground.jsonl", noAgentInfo: true, auth: []string{"cursor_login"},
			textHas: []string{"the agent sends no agentInfo.name", "on for any agent, acting only on frames they know: cursor, claude, sessions, methods"}},
	}
	for _, tt := range tests {
		t.Run(tt.capture, func(t *testing.T) {
			t.Parallel()
			capture := filepath.Join("..", "..", "testdata", "captures", tt.capture)
			code, out, stderr := probeRun(t, nil, "--json", "--", proxyBinary, "mock-agent", capture)
			if code != 0 || stderr != "" {
				t.Fatalf("exit %d, stderr %q", code, stderr)
			}
			rep := decodeProbe(t, out)
			switch {
			case tt.noAgentInfo && rep.Agent != nil:
				t.Errorf("agent %+v, want none", rep.Agent)
			case !tt.noAgentInfo && (rep.Agent == nil || rep.Agent.Name != tt.agent || rep.Agent.Version == ""):
				t.Errorf("agent %+v, want %s with a version", rep.Agent, tt.agent)
			}
			if string(rep.ProtocolVersion) != "1" {
				t.Errorf("protocol version %s", rep.ProtocolVersion)
			}
			var acts []string
			for name, state := range moduleState(rep) {
				if state == "acts" {
					acts = append(acts, name)
				}
			}
			slices.Sort(acts)
			if strings.Join(acts, ",") != strings.Join(tt.acts, ",") {
				t.Errorf("modules acting %v, want %v (%+v)", acts, tt.acts, rep.Modules)
			}
			if len(rep.Modules) != len(allModules()) {
				t.Errorf("%d module verdicts for %d modules", len(rep.Modules), len(allModules()))
			}
			if rep.NativeSubagentSessions != tt.native {
				t.Errorf("native subagent sessions %v, want %v", rep.NativeSubagentSessions, tt.native)
			}
			var auth []string
			for _, a := range rep.AuthMethods {
				auth = append(auth, a.ID)
			}
			if strings.Join(auth, ",") != strings.Join(tt.auth, ",") {
				t.Errorf("auth methods %v, want %v", auth, tt.auth)
			}
			var methods []string
			for _, m := range rep.VendorMethods {
				methods = append(methods, m.Method+": "+m.Handling)
			}
			if len(methods) != len(tt.methods) {
				t.Errorf("vendor methods %q, want %q", methods, tt.methods)
			}
			for i := range min(len(methods), len(tt.methods)) {
				if !strings.HasPrefix(methods[i], tt.methods[i]) {
					t.Errorf("vendor method %q, want %q", methods[i], tt.methods[i])
				}
			}
			if rep.AuthRequired || rep.Session == nil || rep.Session.ID == "" || rep.Session.Error != "" {
				t.Errorf("session %+v, auth required %v", rep.Session, rep.AuthRequired)
			}
			if rep.Exit == nil || rep.Exit.Code != 0 {
				t.Errorf("exit %+v: the mock agent ends at the client's EOF", rep.Exit)
			}
			var adv struct {
				Version string   `json:"version"`
				Modules []string `json:"modules"`
			}
			if err := json.Unmarshal(rep.Advertised, &adv); err != nil || adv.Version != binaryVersion(t, proxyBinary) || len(adv.Modules) != len(allModules()) {
				t.Errorf("advertisement %s (rule M: this binary's version and modules)", rep.Advertised)
			}

			// The text form: one screen, the same findings.
			code, text, stderr := probeRun(t, nil, "--", proxyBinary, "mock-agent", capture)
			if code != 0 || stderr != "" {
				t.Fatalf("text: exit %d, stderr %q", code, stderr)
			}
			if n := strings.Count(text, "\n"); n > 24 {
				t.Errorf("%d lines: more than one screen:\n%s", n, text)
			}
			for _, want := range append([]string{"agent ", "protocol ", "modules ", "subagents ", "auth ", "vendor methods ", "session/new ", "ended "}, tt.textHas...) {
				if !strings.Contains(text, want) {
					t.Errorf("text lacks %q:\n%s", want, text)
				}
			}
		})
	}
}

// TestProbeFailures: exit status 1 with one line that says what failed
// (not found, not ACP, timed out, auth required).
func TestProbeFailures(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	initOK := `out {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"agentCapabilities":{},"authMethods":[{"id":"login","name":"Log in"}],"agentInfo":{"name":"fake","version":"1.0"}}}`
	tests := []struct {
		name   string
		script []string // the fake agent's, when argv is nil
		argv   []string
		flags  []string
		line   string
		report bool // the text report is printed too (initialize was answered)
	}{
		{name: "not found", argv: []string{"no-such-agent-xyz"}, line: `agent "no-such-agent-xyz" not found`},
		{name: "not executable", argv: []string{"../../README.md"}, line: `cannot run agent "../../README.md"`},
		{name: "not ACP: text on stdout", script: []string{"out Usage: fake [options]", "wait never"},
			line: `not ACP: ` + self + ` wrote "Usage: fake [options]" on stdout, not a JSON-RPC frame`},
		{name: "not ACP: exits at once", script: []string{"err cannot start: no config", "exit 3"},
			line: `exited (code 3) after`},
		{name: "not ACP: error to initialize", script: []string{"wait initialize", `out {"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad version"}}`, "wait never"},
			line: `answered initialize with error -32602 "bad version"`},
		// cat in the agent's place sent the initialize request back, and
		// the probe's -32601 to that echo came back as the "answer".
		{name: "not ACP: echoes its input", script: []string{"wait initialize", `out {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`, "wait never"},
			line: `not ACP: ` + self + ` sent the probe's own initialize request back (it echoes its input, as cat does)`},
		{name: "timed out", script: []string{"sleep 60s"}, flags: []string{"--timeout", "300ms", "--kill-grace", "200ms"},
			line: "timed out: " + self + " did not answer initialize within 300ms"},
		{name: "auth required", script: []string{"wait initialize", initOK, "wait session/new",
			`out {"jsonrpc":"2.0","id":2,"error":{"code":-32000,"message":"Authentication required"}}`, "wait never"},
			line: "auth required: " + self + " needs a login before session/new (its auth methods: login)", report: true},
		{name: "session/new fails", script: []string{"wait initialize", initOK, "wait session/new",
			`out {"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"no model configured"}}`, "wait never"},
			line: "session/new failed: -32603 no model configured", report: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var env []string
			argv := tt.argv
			if argv == nil {
				env = []string{envFakeAgent + "=" + script(t, tt.script...)}
				argv = []string{self, "-test.run=^$"}
			}
			args := append(append(append([]string{}, tt.flags...), "--"), argv...)
			code, out, stderr := probeRun(t, env, args...)
			if code != 1 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "acp-normalize: probe: ") || !strings.Contains(stderr, tt.line) {
				t.Fatalf("exit %d, stderr %q; want exit 1 and one line with %q", code, stderr, tt.line)
			}
			if tt.report != strings.Contains(out, "protocol ") {
				t.Errorf("report printed: %v, want %v:\n%s", !tt.report, tt.report, out)
			}
			code, out, _ = probeRun(t, env, append([]string{"--json"}, args...)...)
			if rep := decodeProbe(t, out); code != 1 || !strings.Contains(rep.Failure, tt.line) {
				t.Errorf("--json: exit %d, failure %q", code, rep.Failure)
			}
		})
	}
}

// TestProbeEndsAgentTree: the probe ends the agent as the proxy does (F5):
// after session/new the agent and every process it started are gone when
// the probe exits.
func TestProbeEndsAgentTree(t *testing.T) {
	t.Parallel()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	pidfile := filepath.Join(t.TempDir(), "pids")
	agent := script(t, "wait initialize",
		`out {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"agentCapabilities":{},"authMethods":[]}}`,
		"wait session/new", "spawn-tree "+pidfile, "ignore-term",
		`out {"jsonrpc":"2.0","id":2,"result":{"sessionId":"s1"}}`, "sleep 60s")
	code, out, stderr := probeRun(t, []string{envFakeAgent + "=" + agent}, "--kill-grace", "200ms", "--", self, "-test.run=^$")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	if !strings.Contains(out, "killed with SIGKILL (exit 137): it ignored SIGTERM") {
		t.Errorf("the report does not say how the agent ended:\n%s", out)
	}
	waitGone(t, readPids(t, pidfile))
}

// TestProbeSessionInScratchDir: session/new names a fresh directory,
// gone afterwards, while the agent runs where the probe was started (so a
// relative agent path and relative arguments work, as in an editor).
func TestProbeSessionInScratchDir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// A shell agent: answers initialize and session/new, after writing
	// its working directory and the session/new request down.
	body := "#!/bin/sh\npwd > cwd\n" +
		`read l; echo '{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"agentCapabilities":{}}}'` + "\n" +
		`read l; echo "$l" > new.json; echo '{"jsonrpc":"2.0","id":2,"result":{"sessionId":"s"}}'` + "\n" +
		"cat >/dev/null\n"
	if err := os.WriteFile(filepath.Join(dir, "agent.sh"), []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(proxyBinary, "probe", "--json", "--", "./agent.sh")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	cwd, _ := os.ReadFile(filepath.Join(dir, "cwd"))
	var req struct {
		Params struct {
			Cwd string `json:"cwd"`
		} `json:"params"`
	}
	data, _ := os.ReadFile(filepath.Join(dir, "new.json"))
	if err := json.Unmarshal(data, &req); err != nil {
		t.Fatalf("session/new %q: %v", data, err)
	}
	if got, _ := filepath.EvalSymlinks(strings.TrimSpace(string(cwd))); got != mustEval(t, dir) {
		t.Errorf("agent ran in %q, want %q", cwd, dir)
	}
	if !strings.Contains(req.Params.Cwd, "acp-normalize-probe-") {
		t.Errorf("session/new cwd %q, want a scratch directory", req.Params.Cwd)
	}
	if _, err := os.Stat(req.Params.Cwd); !os.IsNotExist(err) {
		t.Errorf("scratch directory %s left behind (%v)", req.Params.Cwd, err)
	}
}

func mustEval(t *testing.T, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestModuleAgentsDeclared: a module that waits for its agents' names (V1)
// lists them, so that probe and --vendor can say whose it is.
func TestModuleAgentsDeclared(t *testing.T) {
	for _, m := range allModules() {
		if slices.Contains(m.Triggers, rewrite.AgentInfoTrigger) && len(m.Agents) == 0 {
			t.Errorf("module %s waits for agentInfo.name (V1) but lists no Agents", m.Name)
		}
	}
}

// TestProbeRedactsSecrets: `probe --json` is for bug reports, pasted in
// public: like a capture (R2) it holds no secret, neither in the agent's
// stderr lines, nor in the failure line quoting the last of them, nor in
// its raw initialize result. The probe once kept its capture raw.
func TestProbeRedactsSecrets(t *testing.T) {
	t.Parallel()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	const key, bearer = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123", "Bearer abcdefghijklmnop0123"
	initOK := `out {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"agentCapabilities":{"_meta":{"apiKey":"hunter2-not-a-shape"}},"authMethods":[],"agentInfo":{"name":"fake","version":"1.0"}}}`
	for _, tt := range []struct {
		name   string
		script []string
	}{
		{"answered", []string{"err using ANTHROPIC_API_KEY=" + key, "wait initialize", initOK, "wait session/new",
			`out {"jsonrpc":"2.0","id":2,"result":{"sessionId":"s1"}}`, "wait never"}},
		{"failed", []string{"wait initialize", "err request failed: Authorization: " + bearer, "exit 3"}},
		// The agent's own error messages, in the failure line (stderr and
		// --json) and the text report's session/new line.
		{"initialize error", []string{"wait initialize", `out {"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Invalid API key ` + key + `"}}`, "wait never"}},
		{"session/new error", []string{"wait initialize", initOK, "wait session/new",
			`out {"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"Invalid API key ` + key + `"}}`, "wait never"}},
		{"auth required", []string{"wait initialize", initOK, "wait session/new",
			`out {"jsonrpc":"2.0","id":2,"error":{"code":-32000,"message":"Authentication required: ` + bearer + `"}}`, "wait never"}},
		// --json fields read from the initialize result, which the raw
		// copy in the same report redacts.
		{"initialize fields", []string{"wait initialize",
			`out {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"agentCapabilities":{},"authMethods":[{"id":"login","name":"Log in","description":"paste ` + key + ` here"}],"agentInfo":{"name":"fake","title":"fake ` + bearer + `","version":"1.0"}}}`,
			"wait session/new", `out {"jsonrpc":"2.0","id":2,"result":{"sessionId":"s1","modes":{"currentModeId":"` + key + `","availableModes":[{"id":"` + key + `","name":"m"}]}}}`, "wait never"}},
		// The other fields the report prints: a terminal login's
		// arguments, the models, a URL's password in a stderr line.
		{"logins, models and stderr", []string{"wait initialize", "err fetching https://probe:hunter2@example.com/v1",
			`out {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"agentCapabilities":{},"authMethods":[{"id":"login","name":"Log in","type":"terminal","args":["--token","` + key + `"]}],"agentInfo":{"name":"fake","version":"1.0"}}}`,
			"wait session/new", `out {"jsonrpc":"2.0","id":2,"result":{"sessionId":"s1","models":{"currentModelId":"m-` + key + `","availableModels":[{"modelId":"m-` + key + `","name":"m"}]}}}`, "wait never"}},
		// A line that is no frame, quoted in the failure line.
		{"non-JSON stdout", []string{"wait initialize", "out booting with " + bearer, "exit 3"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			env := []string{envFakeAgent + "=" + script(t, tt.script...)}
			for _, flags := range [][]string{{"--json"}, nil} {
				_, out, stderr := probeRun(t, env, append(flags, "--", self, "-test.run=^$")...)
				for _, secret := range []string{key, "abcdefghijklmnop0123", "hunter2"} {
					if strings.Contains(out+stderr, secret) {
						t.Errorf("probe %v printed a secret %q:\n%s\n%s", flags, secret, out, stderr)
					}
				}
				if flags != nil && !strings.Contains(out, "<redacted>") {
					t.Errorf("probe --json shows no redaction:\n%s", out)
				}
			}
		})
	}
}

// TestProbeStderrFlood: an agent that writes 50 MB on stderr before it
// answers is probed: the report counts the stderr lines kept and has the
// last of them (the kept capture: TestProbeCaptureBounded). The probe
// peaks near 100 MB here; it held the whole capture (615 MB).
func TestProbeStderrFlood(t *testing.T) {
	t.Parallel()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	const lines = 500_000 // of 100 bytes
	agent := script(t, "errflood "+strconv.Itoa(lines), "wait initialize",
		`out {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"agentCapabilities":{},"authMethods":[]}}`,
		"wait session/new", `out {"jsonrpc":"2.0","id":2,"result":{"sessionId":"s1"}}`, "wait never")
	code, out, stderr := probeRun(t, []string{envFakeAgent + "=" + agent}, "--json", "--", self, "-test.run=^$")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	rep := decodeProbe(t, out)
	// The capture writer may leave lines out under the flood (a
	// "dropped" event): the count is what it kept.
	if rep.StderrLines < stderrKept || rep.StderrLines > lines || len(rep.Stderr) != stderrKept || !strings.HasPrefix(rep.Stderr[stderrKept-1], "stderr flood line ") {
		t.Errorf("%d stderr lines, the last %d: %q", rep.StderrLines, len(rep.Stderr), rep.Stderr)
	}
}

// TestProbeCaptureBounded: the probe keeps of its capture what its report
// needs (P6): of the agent's stderr records the count and the last
// stderrKept, of the rest probeKept bytes, whatever the agent writes, and
// in the order written. It once kept the whole capture in memory (3.5 GB
// after 10 s of `yes >&2`, and a minute past --timeout to read it; 615 MB
// peak for 50 MB of stderr).
func TestProbeCaptureBounded(t *testing.T) {
	var c probeCapture
	stderrLine := func(i int) string { return "line " + strconv.Itoa(i) + strings.Repeat("x", 100) }
	frame := []byte(`{"jsonrpc":"2.0","method":"_x","params":{"stderr":"` + strings.Repeat("y", 4000) + `"}}`)
	seq := int64(0)
	for i := range 200_000 {
		line := stderrLine(i)
		seq++
		c.record(pipe.Record{Seq: seq, From: pipe.Agent, Stderr: &line})
		if i%20 == 0 {
			seq++
			c.record(pipe.Record{Seq: seq, From: pipe.Agent, Frame: frame})
		}
	}
	kept := 0
	for _, r := range c.all() {
		kept += len(r.Frame)
		if r.Stderr != nil {
			kept += len(*r.Stderr)
		}
	}
	if kept > probeKept+stderrKept*200 || c.stderrLines != 200_000 || c.leftOut != 10_000-probeKept/len(frame) {
		t.Errorf("kept %d bytes, %d stderr lines counted, %d records left out", kept, c.stderrLines, c.leftOut)
	}
	all := c.all()
	if first, last := all[0], all[len(all)-1]; first.Seq != 2 || last.Stderr == nil || *last.Stderr != stderrLine(199_999) {
		t.Errorf("first kept is record %d, last %+v", first.Seq, last)
	}
}

// TestProbeEscapesControlSequences: what the agent says reaches the
// terminal escaped, as replay and check show it: no OSC (a window title,
// an OSC 52 clipboard write), no C1 CSI, no right-to-left override, in the
// text report, the failure line on stderr or --json, whichever field it
// comes in (agentInfo, auth methods, session modes, error messages,
// vendor method names).
func TestProbeEscapesControlSequences(t *testing.T) {
	t.Parallel()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// JSON escapes: the agent's frames are valid JSON, the strings they
	// hold are not safe to print.
	const osc, clip, csi, rlo = `\u001b]0;pwned\u0007`, `\u001b]52;c;ZWNobyBoaQ==\u001b\\`, `\u009b31m`, `\u202e`
	initResult := `out {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"agentCapabilities":{},` +
		`"authMethods":[{"id":"login` + csi + `","name":"Log in` + rlo + `","description":"d` + osc + `","type":"terminal","args":["--login` + clip + `"]}],` +
		`"agentInfo":{"name":"fake` + osc + `","title":"Fake` + clip + `","version":"1.0` + csi + `"}}}`
	for _, tt := range []struct {
		name   string
		script []string
	}{
		{"answered", []string{"wait initialize", initResult,
			`out {"jsonrpc":"2.0","method":"_x/note` + osc + `","params":{}}`,
			"wait session/new", `out {"jsonrpc":"2.0","id":2,"result":{"sessionId":"s1","modes":{"currentModeId":"m` + rlo + `","availableModes":[{"id":"m` + csi + `","name":"m"}]},"models":{"currentModelId":"x` + osc + `","availableModels":[]}}}`, "wait never"}},
		{"session/new error", []string{"wait initialize", initResult, "wait session/new",
			`out {"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"no` + osc + clip + csi + rlo + `"}}`, "wait never"}},
		{"auth required", []string{"wait initialize", initResult, "wait session/new",
			`out {"jsonrpc":"2.0","id":2,"error":{"code":-32000,"message":"login` + osc + `"}}`, "wait never"}},
		{"initialize error", []string{"wait initialize", `out {"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"bad` + osc + csi + rlo + `"}}`, "wait never"}},
		{"stderr and stdout lines", []string{"err fatal\x1b]0;pwned\x07 \u009b31m \u202e", "out Usage\x1b]52;c;eA==\x07 \u202e", "wait never"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			env := []string{envFakeAgent + "=" + script(t, tt.script...)}
			for _, flags := range [][]string{nil, {"--json"}} {
				_, out, stderr := probeRun(t, env, append(flags, "--timeout", "5s", "--", self, "-test.run=^$")...)
				for where, text := range map[string]string{"stdout": out, "stderr": stderr} {
					if i := strings.IndexFunc(text, func(r rune) bool {
						return r == 0x1b || r == 0x07 || r == 0x9b || r == 0x9d || r == 0x202e
					}); i >= 0 {
						t.Errorf("probe %v wrote a control sequence to %s at %d: %q", flags, where, i, text[max(0, i-40):min(len(text), i+40)])
					}
				}
				if flags != nil {
					decodeProbe(t, out) // still one JSON object
				}
			}
		})
	}
}

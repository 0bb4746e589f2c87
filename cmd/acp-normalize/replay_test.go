package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/rewrite/rewritetest"
)

// TestReplayCommand pins the output of `acp-normalize replay` (rule R3)
// byte for byte: stdout, stderr and the exit code, in
// testdata/replay/NAME.golden. Module lists are given explicitly so that
// adding a vendor module does not change them (only the version in the
// initialize advertisement would). Run with -update to rewrite.
func TestReplayCommand(t *testing.T) {
	tests := []struct {
		name string
		args []string
		env  map[string]string
	}{
		{"jsonl", []string{"replay", "--modules", "none", "testdata/mock-session.jsonl"}, nil},
		{"pretty", []string{"replay", "--modules", "none", "--format", "pretty", "--color", "never", "testdata/mock-session.jsonl"}, nil},
		{"diff", []string{"replay", "--modules", "none", "--diff", "--format", "pretty", "testdata/mock-session.jsonl"}, nil},
		{"diff-jsonl", []string{"replay", "--modules", "none", "--diff", "testdata/mock-session.jsonl"}, nil},
		{"acpdbg-pretty", []string{"replay", "--modules", "none", "--format", "pretty", "testdata/acpdbg-sample.jsonl"}, nil},
		{"acpdbg-jsonl", []string{"replay", "--modules", "none", "testdata/acpdbg-sample.jsonl"}, nil},
		{"acpdbg-non-json-forward", []string{"replay", "--modules", "none", "--non-json", "forward", "testdata/acpdbg-sample.jsonl"}, nil},
		{"bad-lines", []string{"replay", "--modules", "none", "testdata/bad-lines.jsonl"}, nil},
		{"bad-lines-pretty", []string{"replay", "--modules", "none", "--format", "pretty", "testdata/bad-lines.jsonl"}, nil},
		{"two-captures-two-connections", []string{"replay", "--modules", "none", "--diff", "--format", "pretty", "testdata/acpdbg-sample.jsonl", "testdata/mock-session.jsonl"}, nil},
		// A capture that does not exist is a usage mistake (exit 2): no
		// capture is replayed.
		{"usage-missing-file", []string{"replay", "--modules", "none", "testdata/bad-lines.jsonl", "testdata/no-such-capture.jsonl"}, nil},
		// A flag after the first capture is read as a capture: the
		// message says where flags go.
		{"usage-flag-after-capture", []string{"replay", "testdata/mock-session.jsonl", "--modules", "none"}, nil},
		{"color-always", []string{"replay", "--modules", "none", "--format", "pretty", "--color", "always", "testdata/acpdbg-sample.jsonl"}, nil},
		{"color-auto-not-a-tty", []string{"replay", "--modules", "none", "--format", "pretty", "testdata/acpdbg-sample.jsonl"}, map[string]string{"NO_COLOR": ""}},
		// F6: the agent exits while the proxy holds Cursor's create_plan
		// for the client: the client's prompt gets -32603, Cursor gets no
		// cancelled (live, the modules get no last word then).
		{"plan-agent-exits", []string{"replay", "--modules", "cursor", "--diff", "--format", "pretty", "testdata/plan-agent-exits.jsonl"}, nil},
		// C12: a forwarded signal gives the modules their last word.
		{"plan-signal", []string{"replay", "--modules", "cursor", "--diff", "testdata/plan-signal.jsonl"}, nil},
		// The capture's start event recorded cursor, nonJSON forward and
		// forward-unknown-vendor-methods: replay uses them (the line and
		// cursor/brand_new are forwarded) and warns about what this
		// binary lacks; flags given before or after "replay" win.
		{"recorded-settings", []string{"replay", "testdata/recorded-settings.jsonl"}, nil},
		{"recorded-settings-overridden", []string{"replay", "--non-json", "drop", "--forward-unknown-vendor-methods=false", "testdata/recorded-settings.jsonl"}, nil},
		{"recorded-settings-global-flags", []string{"--non-json", "drop", "--modules", "none", "replay", "testdata/recorded-settings.jsonl"}, nil},
		{"module-flag-on-replay", []string{"replay", "--modules", "cursor", "--forward-unknown-vendor-methods", "testdata/unknown-cursor-method.jsonl"}, nil},
		{"module-flag-before-replay", []string{"--cursor-native-subagents", "--forward-unknown-vendor-methods", "replay", "--modules", "cursor", "testdata/unknown-cursor-method.jsonl"}, nil},
		// An acp-inspector-trace v1 file (header first), two connections:
		// each replays as its own connection; the non-JSON frame is a
		// non-JSON line (F2).
		{"inspector-trace-pretty", []string{"replay", "--format", "pretty", "testdata/inspector-trace.jsonl"}, nil},
		{"inspector-trace-jsonl", []string{"replay", "testdata/inspector-trace.jsonl"}, nil},
		{"usage-html-diff", []string{"replay", "--format", "html", "--diff", "testdata/mock-session.jsonl"}, nil},
		{"usage-no-capture", []string{"replay"}, nil},
		{"usage-bad-format", []string{"replay", "--format", "xml", "testdata/mock-session.jsonl"}, nil},
		{"usage-bad-color", []string{"replay", "--color", "rainbow", "testdata/mock-session.jsonl"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			var stdout, stderr bytes.Buffer
			code := run(append([]string{"acp-normalize"}, tt.args...), strings.NewReader(""), &stdout, &stderr)
			got := "exit " + strconv.Itoa(code) + "\n-- stdout --\n" + stdout.String() + "-- stderr --\n" + stderr.String()
			rewritetest.CheckFile(t, filepath.Join("testdata", "replay", tt.name+".golden"), []byte(got))
		})
	}
}

// TestReplayUnknownModule: --modules has the proxy's semantics; an
// unknown name is a usage error (exit 2) naming the module.
func TestReplayUnknownModule(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run([]string{"acp-normalize", "replay", "--modules", "nonesuch", "testdata/mock-session.jsonl"}, nil, &stdout, &stderr)
	if code != exitUsage || stdout.Len() != 0 || !strings.HasPrefix(stderr.String(), `acp-normalize: --modules: unknown module "nonesuch"`) {
		t.Errorf("exit %d, stdout %q, stderr %q", code, stdout.String(), stderr.String())
	}
}

// TestReplayUnknownVendor: --vendor has the proxy's semantics; a name
// that is no vendor module's is a usage error (exit 2), not ignored.
func TestReplayUnknownVendor(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run([]string{"acp-normalize", "replay", "--vendor", "qwne", "testdata/mock-session.jsonl"}, nil, &stdout, &stderr)
	if code != exitUsage || stdout.Len() != 0 || !strings.HasPrefix(stderr.String(), `acp-normalize: --vendor: unknown vendor "qwne"`) {
		t.Errorf("exit %d, stdout %q, stderr %q", code, stdout.String(), stderr.String())
	}
}

// TestReplayStdin: "-" replays a capture from stdin.
func TestReplayStdin(t *testing.T) {
	in := `{"from":"agent","frame":{"jsonrpc":"2.0","method":"_x","params":{ }}}` + "\n"
	var stdout, stderr bytes.Buffer
	code := run([]string{"acp-normalize", "replay", "--modules", "none", "-"}, strings.NewReader(in), &stdout, &stderr)
	if code != 0 || stdout.String() != `{"to":"client","frame":{"jsonrpc":"2.0","method":"_x","params":{ }}}`+"\n" {
		t.Errorf("exit %d, stdout %q, stderr %q", code, stdout.String(), stderr.String())
	}
}

// TestReplayJSONLByteExact: rule R3 with P1 — with no module, every
// input frame of a capture comes out in the replay output spliced byte
// for byte; only the initialize response differs (the advertisement,
// rule M). Runs on every bundled capture.
func TestReplayJSONLByteExact(t *testing.T) {
	all, _ := filepath.Glob("../../testdata/captures/*/*.jsonl")
	var captures []string
	for _, c := range all {
		if !strings.HasSuffix(c, ".replay.jsonl") {
			captures = append(captures, c)
		}
	}
	captures = append(captures, "testdata/mock-session.jsonl", "testdata/acpdbg-sample.jsonl")
	for _, capture := range captures {
		t.Run(filepath.Base(capture), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run([]string{"acp-normalize", "replay", "--modules", "none", capture}, nil, &stdout, &stderr); code != 0 {
				t.Fatalf("exit %d: %s", code, stderr.String())
			}
			data, err := os.ReadFile(capture)
			if err != nil {
				t.Fatal(err)
			}
			var in [][]byte
			for _, line := range bytes.Split(data, []byte("\n")) {
				i := bytes.Index(line, []byte(`"frame":{`))
				if i < 0 || bytes.Contains(line, []byte(`"op":`)) || bytes.Contains(line, []byte(`"direction":"meta"`)) {
					continue
				}
				in = append(in, line[i+len(`"frame":`):len(line)-1])
			}
			out := bytes.Split(bytes.TrimSuffix(stdout.Bytes(), []byte("\n")), []byte("\n"))
			if len(out) != len(in) {
				t.Fatalf("%d output lines for %d input frames", len(out), len(in))
			}
			changed := 0
			for i := range in {
				j := bytes.Index(out[i], []byte(`"frame":`))
				frame := out[i][j+len(`"frame":`) : len(out[i])-1]
				if !bytes.Equal(frame, in[i]) {
					changed++
					if !bytes.Contains(frame, []byte(`"acp-normalize":{"modules":[],"version":"`+version+`"}`)) {
						t.Errorf("frame %d changed:\n in %s\nout %s", i, in[i], frame)
					}
				}
			}
			if changed != 1 {
				t.Errorf("%d frames changed, want 1 (the initialize response)", changed)
			}
		})
	}
}

// demoCapture is the bundled session `make demo` replays.
const demoCapture = "testdata/captures/cursor/subagent-foreground.jsonl"

// TestDemo runs what `make demo` (the README's first command) runs on the
// bundled Cursor capture: a pretty timeline, exit 0, with the cursor/task
// request answered by the proxy (C1) and the subagent's state shown.
func TestDemo(t *testing.T) {
	makefile, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(makefile, []byte("DEMO_CAPTURE ?= "+demoCapture)) ||
		!bytes.Contains(makefile, []byte("replay --format pretty $(DEMO_CAPTURE)")) {
		t.Fatalf("the Makefile's demo target does not replay %s in the pretty format", demoCapture)
	}
	capture := filepath.Join("..", "..", demoCapture)
	var stdout, stderr bytes.Buffer
	if code := run([]string{"acp-normalize", "replay", "--format", "pretty", capture}, nil, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	for _, want := range []string{"cursor/task #0", "✗ dropped", "↩ replied → agent", "[subagent completed]"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("demo output lacks %q:\n%s", want, stdout.String())
		}
	}
}

// TestReplayModuleFlagsMatchRecordedOptions: every module option the
// proxy records is a flag of replay and is read back from a start event,
// so a recorded option is never reported unknown by the binary that wrote
// it; and the options keep the names existing captures recorded (a bool
// on by default is recorded as name=false when off; captures made while
// cursor-native-subagents was off by default recorded it bare when on).
func TestReplayModuleFlagsMatchRecordedOptions(t *testing.T) {
	opts := moduleOptions()
	changed := rewrite.Settings{}
	for _, o := range opts {
		changed[o.Name] = strconv.FormatBool(!o.DefaultOn())
		if o.Kind == rewrite.StringOption {
			changed[o.Name] = o.Default + "-x"
		}
	}
	recorded := changed.Recorded(opts)
	for _, name := range []string{"forward-unknown-vendor-methods", "cursor-native-subagents=false"} {
		if !slices.Contains(recorded, name) {
			t.Errorf("recorded options %v lack %q (captures record it)", recorded, name)
		}
	}
	if _, unknown := rewrite.ParseRecorded(append(recorded, "cursor-native-subagents"), opts); len(unknown) > 0 {
		t.Errorf("replay does not read back recorded options %v", unknown)
	}
	cmd := replayCommand(streams{})
	for _, o := range opts {
		found := false
		for _, f := range cmd.Flags {
			found = found || slices.Contains(f.Names(), o.Name)
		}
		if !found {
			t.Errorf("replay has no --%s flag", o.Name)
		}
	}
}

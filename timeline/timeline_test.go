package timeline

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/rewrite/rewritetest"
	"github.com/acp-normalize/acp-normalize/route"
)

// renderers are the outputs pinned by golden files, by file suffix.
var renderers = []struct {
	suffix string
	new    func(w *bytes.Buffer) Renderer
}{
	{"replay.jsonl", func(w *bytes.Buffer) Renderer { return NewJSONL(w) }},
	{"pretty.txt", func(w *bytes.Buffer) Renderer { return NewPretty(w, Options{}) }},
	{"diff.txt", func(w *bytes.Buffer) Renderer { return NewDiff(w, Options{}) }},
	{"diff.jsonl", func(w *bytes.Buffer) Renderer { return NewDiffJSONL(w) }},
}

// render replays the captures through the test module and renders them.
func render(t *testing.T, r Renderer, mods []rewrite.Module, names ...string) {
	t.Helper()
	for _, name := range names {
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Begin(filepath.ToSlash(name)); err != nil {
			t.Fatal(err)
		}
		err = route.Replay(f, route.RouterConfig{Modules: mods, Version: "test"}, func(s *route.Step) error {
			if s.Kind == route.StepError {
				return nil
			}
			return r.Step(s)
		})
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if err := r.End(); err != nil {
			t.Fatal(err)
		}
	}
}

// testCaptures are the timeline's test captures, testdata/*.jsonl.
func testCaptures(t *testing.T) []string {
	t.Helper()
	captures, err := filepath.Glob("testdata/*.jsonl")
	if err != nil || len(captures) == 0 {
		t.Fatalf("no captures in testdata: %v", err)
	}
	return captures
}

// TestGolden pins the R3 JSONL, the pretty timeline and both diffs of
// every capture in testdata (colour off). Run with -update to rewrite.
func TestGolden(t *testing.T) {
	for _, capture := range testCaptures(t) {
		base := strings.TrimSuffix(filepath.Base(capture), ".jsonl")
		for _, rd := range renderers {
			t.Run(base+"/"+rd.suffix, func(t *testing.T) {
				var buf bytes.Buffer
				render(t, rd.new(&buf), []rewrite.Module{rewritetest.Module()}, capture)
				rewritetest.CheckFile(t, filepath.Join("testdata", "golden", base+"."+rd.suffix), buf.Bytes())
			})
		}
	}
}

var ansi = regexp.MustCompile("\x1b\\[[0-9;]*m")

// TestColor: with colour on, the human outputs carry ANSI colours and
// are otherwise the same text as with colour off.
func TestColor(t *testing.T) {
	for _, tc := range []struct {
		name string
		new  func(w *bytes.Buffer, o Options) Renderer
	}{
		{"pretty", func(w *bytes.Buffer, o Options) Renderer { return NewPretty(w, o) }},
		{"diff", func(w *bytes.Buffer, o Options) Renderer { return NewDiff(w, o) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var plain, colored bytes.Buffer
			mods := []rewrite.Module{rewritetest.Module()}
			render(t, tc.new(&plain, Options{}), mods, "testdata/session.jsonl")
			render(t, tc.new(&colored, Options{Color: true}), mods, "testdata/session.jsonl")
			if bytes.Contains(plain.Bytes(), []byte("\x1b[")) {
				t.Error("colour off: output has ANSI escapes")
			}
			if !bytes.Contains(colored.Bytes(), []byte(ansiYellow)) || !bytes.Contains(colored.Bytes(), []byte(ansiRed)) {
				t.Error("colour on: replaced (yellow) or dropped (red) marks are not coloured")
			}
			if got := ansi.ReplaceAll(colored.Bytes(), nil); !bytes.Equal(got, plain.Bytes()) {
				t.Errorf("colour on, escapes removed, differs from colour off:\n%s", got)
			}
		})
	}
}

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite/rewritetest"
	"github.com/acp-normalize/acp-normalize/route"
)

// TestCursorCaptures replays the whole-session Cursor captures under
// testdata/captures/cursor through the full module list (rule R3 output
// lines) and compares with the .replay.jsonl golden files byte for byte
// (-update rewrites them). It also checks, whatever the golden says:
// no cursor/* method reaches the client (C1, C13), every Cursor request
// gets exactly one answer (C1, C8-C13), every written frame is valid JSON
// and an unchanged frame is byte-identical (P1).
func TestCursorCaptures(t *testing.T) {
	captures := captureFiles(t, "cursor/*.jsonl")
	if len(captures) == 0 {
		t.Fatal("no Cursor captures")
	}
	for _, path := range captures {
		name := strings.TrimSuffix(filepath.Base(path), ".jsonl")
		t.Run(name, func(t *testing.T) {
			got := cursorReplay(t, path)
			rewritetest.CheckFile(t, strings.TrimSuffix(path, ".jsonl")+".replay.jsonl", got)
		})
	}
}

func cursorReplay(t *testing.T, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := route.NewRouter(route.RouterConfig{Modules: allModules(), Version: "0.0.0-test"}) // as the other vendors' goldens: not this build's
	if err != nil {
		t.Fatal(err)
	}
	open := map[string]int{} // raw ids of Cursor's requests -> answers seen
	var out bytes.Buffer
	for rec, err := range pipe.NewCaptureReader(f).Records() {
		if err != nil {
			t.Fatal(err)
		}
		if !rec.IsInput() || rec.Frame == nil {
			continue
		}
		env := pipe.Peek(rec.Frame)
		if rec.From == pipe.Agent && env.Kind == pipe.Request && isCursorMethod(string(env.Method)) {
			open[string(env.ID)] = 0
		}
		for _, o := range r.Handle(rec.From, rec.Frame, nil) {
			if o.Op == "" && !bytes.Equal(o.Frame, rec.Frame) {
				t.Errorf("P1: forwarded frame changed: %s", o.Frame)
			}
			if !json.Valid(o.Frame) {
				t.Errorf("invalid JSON written: %s", o.Frame)
			}
			oe := pipe.Peek(o.Frame)
			if o.To == pipe.Client && isCursorMethod(string(oe.Method)) {
				t.Errorf("C1/C13: %s reached the client", oe.Method)
			}
			if o.To == pipe.Agent && oe.Kind == pipe.Response {
				if n, ok := open[string(oe.ID)]; ok {
					open[string(oe.ID)] = n + 1
				}
			}
			fmt.Fprintf(&out, `{"to":%q,"frame":%s}`+"\n", o.To.String(), o.Frame)
		}
	}
	for id, n := range open {
		if n != 1 {
			t.Errorf("Cursor request %s answered %d times, want once", id, n)
		}
	}
	return out.Bytes()
}

func isCursorMethod(m string) bool {
	m = strings.TrimPrefix(m, "_")
	return strings.HasPrefix(m, "cursor/")
}

// TestCursorCapturesMarkedHandWritten keeps the Cursor captures from being
// mistaken for recordings: every capture under testdata/captures/cursor
// must have a row in the Cursor table of testdata/captures/README.md whose
// origin column says it is hand-written.
func TestCursorCapturesMarkedHandWritten(t *testing.T) {
	root := filepath.Join("..", "..", "testdata", "captures")
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range captureFiles(t, "cursor/*.jsonl") {
		n++
		row := "| `cursor/" + filepath.Base(f) + "` | hand-written from documented frames (not a recording) |"
		if !bytes.Contains(readme, []byte(row)) {
			t.Errorf("testdata/captures/README.md has no row starting %q", row)
		}
	}
	if n == 0 {
		t.Fatal("no Cursor captures")
	}
}

package rewritetest

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"
)

// update is -update, defined once for every test binary that uses the
// kit: golden sections and files are rewritten from the current code.
var update = flag.Bool("update", false, "rewrite golden files from the current code (review the diff)")

// Updating reports whether go test runs with -update.
func Updating() bool { return *update }

// Case is one txtar golden case.
type Case struct {
	// Path is the case's file.
	Path    string
	archive *txtar.Archive
	changed bool
}

// Comment returns the text before the first section.
func (c *Case) Comment() []byte { return c.archive.Comment }

// File returns the section name.
func (c *Case) File(name string) ([]byte, bool) {
	for _, f := range c.archive.Files {
		if f.Name == name {
			return f.Data, true
		}
	}
	return nil, false
}

// Check compares got with section name byte for byte; with -update it
// replaces (or adds) the section instead.
func (c *Case) Check(t testing.TB, name string, got []byte) {
	t.Helper()
	if *update {
		for i := range c.archive.Files {
			if c.archive.Files[i].Name == name {
				c.changed = c.changed || !bytes.Equal(c.archive.Files[i].Data, got)
				c.archive.Files[i].Data = got
				return
			}
		}
		c.archive.Files = append(c.archive.Files, txtar.File{Name: name, Data: got})
		c.changed = true
		return
	}
	want, ok := c.File(name)
	if !ok {
		t.Errorf("%s: no %s section (go test -update adds it)", c.Path, name)
		return
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from %s (go test -update rewrites it after review):\n%s", name, c.Path, LineDiff(want, got))
	}
}

// RunGolden runs run for every file matching pattern (a filepath.Glob),
// each as a subtest named after the file without ".txtar". With -update
// the sections run checked are written back.
func RunGolden(t *testing.T, pattern string, run func(t *testing.T, c *Case)) {
	t.Helper()
	files, err := filepath.Glob(pattern)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no golden cases match %s", pattern)
	}
	for _, path := range files {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txtar"), func(t *testing.T) {
			a, err := txtar.ParseFile(path)
			if err != nil {
				t.Fatal(err)
			}
			c := &Case{Path: path, archive: a}
			run(t, c)
			if c.changed {
				if err := os.WriteFile(path, txtar.Format(a), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// CheckFile compares got with the file at path byte for byte; with
// -update it writes the file instead.
func CheckFile(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update creates it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s (go test -update rewrites it after review):\n%s", path, LineDiff(want, got))
	}
}

// LineDiff shows the first three lines that differ, with their numbers.
func LineDiff(want, got []byte) string {
	w := bytes.Split(want, []byte("\n"))
	g := bytes.Split(got, []byte("\n"))
	var b strings.Builder
	shown := 0
	for i := 0; i < max(len(w), len(g)) && shown < 3; i++ {
		var wl, gl []byte
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if !bytes.Equal(wl, gl) {
			shown++
			fmt.Fprintf(&b, "line %d:\nwant: %s\n got: %s\n", i+1, wl, gl)
		}
	}
	if len(w) != len(g) {
		fmt.Fprintf(&b, "(want %d lines, got %d)\n", len(w), len(g))
	}
	if b.Len() == 0 {
		return "(same lines)"
	}
	return b.String()
}

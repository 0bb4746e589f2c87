package main

import (
	"go/parser"
	gotoken "go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// modulePath is the import path of this repository's module.
const modulePath = "github.com/acp-normalize/acp-normalize"

// floors are the layers of the house, bottom first (docs/contributing.md,
// "The house"): a package imports only packages of its own floor or
// below, so nothing imports upward. A folder counts with everything under
// it. Packages on no floor (the capture rig, the bench harness, the
// release builder) are tools beside the house: they may import any floor,
// and only commands import them.
var floors = [][]string{
	{"internal/rawjson", "internal/acpschema", "internal/terminal"},
	{"pipe"},
	{"rewrite"},
	{"route"},
	{"proxy", "timeline", "check", "mockagent"},
	{"cmd"},
}

// apart are floors whose packages must not import each other: the
// renderers, the validator and the mock agent use the engine, never the
// process shell, and none of them another.
var apart = map[string]bool{"proxy": true, "timeline": true, "check": true, "mockagent": true}

// engineForbidden are imports the routing engine must not have: it runs
// no process and handles no signal (package proxy does).
var engineForbidden = []string{"os/exec", "os/signal", "syscall", "golang.org/x/sys/unix", "golang.org/x/sys/windows"}

// floorOf returns the floor of a package directory (slash-separated,
// relative to the root) and the folder that put it there, or -1.
func floorOf(dir string) (int, string) {
	for i, fl := range floors {
		for _, top := range fl {
			if dir == top || strings.HasPrefix(dir, top+"/") {
				return i, top
			}
		}
	}
	return -1, ""
}

// TestLayersNothingImportsUpward reads every non-test Go file's imports
// and checks them against the floors.
func TestLayersNothingImportsUpward(t *testing.T) {
	fset := gotoken.NewFileSet()
	err := filepath.WalkDir(repoRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != repoRoot && (name == "testdata" || name == "node_modules" || strings.HasPrefix(name, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(repoRoot, path)
		dir := filepath.ToSlash(filepath.Dir(rel))
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		from, fromTop := floorOf(dir)
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if (fromTop == "route") && slices.Contains(engineForbidden, p) {
				t.Errorf("%s imports %s: the routing engine runs no process (that is package proxy)", rel, p)
			}
			target, ok := strings.CutPrefix(p, modulePath+"/")
			if !ok {
				continue
			}
			to, toTop := floorOf(target)
			switch {
			case to < 0 && from >= 0 && fromTop != "cmd":
				t.Errorf("%s (floor %d) imports %s, a tool beside the house", rel, from, target)
			case from < 0:
				// a tool: any floor
			case to > from:
				t.Errorf("%s (floor %d, %s) imports %s (floor %d, %s): upward", rel, from, fromTop, target, to, toTop)
			case to == from && fromTop != toTop && apart[fromTop]:
				t.Errorf("%s imports %s: %s and %s stand apart on their floor", rel, target, fromTop, toTop)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

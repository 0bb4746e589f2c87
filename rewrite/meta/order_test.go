package meta_test

import (
	"fmt"
	"go/ast"
	"go/build"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestStatusesComparedOnlyHere checks that the order of rule M's statuses
// (P4) is written once, in this package: no other non-test file of
// rewrite/ compares a status (==, !=, <, ...) or asks its rank. Modules
// ask Status's methods (Before, Final, Ended, Detached, Completed,
// Further, Advance, Follow, Keep, Detach) instead. A comparison with ""
// (is there a status at all?) and a switch that maps a status to another
// vocabulary (sessions' child states) are no order and stay with the
// modules. Likewise the V3 title: only rewrite/launch calls meta.Title.
func TestStatusesComparedOnlyHere(t *testing.T) {
	const module = "github.com/acp-normalize/acp-normalize/"
	const metaPath = module + "rewrite/meta"
	fset := token.NewFileSet()
	// Each package's own files, by directory; imports come from the
	// compiler's export data (built by go list -export, cached).
	dirs := map[string][]*ast.File{}
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		if ok, err := build.Default.MatchFile(filepath.Dir(path), d.Name()); !ok || err != nil {
			return err // another platform's file, or a tag's
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		dirs[filepath.Dir(path)] = append(dirs[filepath.Dir(path)], f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The export data of every package rewrite/ imports.
	out, err := exec.Command("go", "list", "-export", "-deps", "-f", "{{.ImportPath}}={{.Export}}", "../...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	exports := map[string]string{}
	for line := range strings.Lines(string(out)) {
		if path, file, ok := strings.Cut(strings.TrimSpace(line), "="); ok && file != "" {
			exports[path] = file
		}
	}
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		file, ok := exports[path]
		if !ok {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(file)
	})
	checked, sawMeta := 0, false
	for dir, files := range dirs {
		path := module + filepath.ToSlash(filepath.Join("rewrite", "meta", dir))
		if path == metaPath {
			sawMeta = true
			continue
		}
		info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}, Uses: map[*ast.Ident]types.Object{}}
		conf := types.Config{Importer: imp}
		if _, err := conf.Check(path, fset, files, info); err != nil {
			t.Fatalf("type-checking %s: %v", dir, err)
		}
		isStatus := func(e ast.Expr) bool {
			tv, ok := info.Types[e]
			if !ok {
				return false
			}
			n, ok := tv.Type.(*types.Named)
			return ok && n.Obj().Name() == "Status" && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == metaPath
		}
		isEmpty := func(e ast.Expr) bool {
			tv, ok := info.Types[e]
			return ok && tv.Value != nil && tv.Value.ExactString() == `""`
		}
		for _, f := range files {
			checked++
			ast.Inspect(f, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.BinaryExpr:
					switch n.Op {
					case token.EQL, token.NEQ, token.LSS, token.GTR, token.LEQ, token.GEQ:
					default:
						return true
					}
					if (isStatus(n.X) || isStatus(n.Y)) && !isEmpty(n.X) && !isEmpty(n.Y) {
						t.Errorf("%s: statuses compared outside rewrite/meta: use the methods of meta.Status", fset.Position(n.Pos()))
					}
				case *ast.SelectorExpr:
					if strings.EqualFold(n.Sel.Name, "rank") && isStatus(n.X) {
						t.Errorf("%s: a status's rank outside rewrite/meta", fset.Position(n.Pos()))
					}
					// The V3 title and its state are the launch kit's.
					if obj := info.Uses[n.Sel]; obj != nil && obj.Pkg() != nil && obj.Pkg().Path() == metaPath && obj.Name() == "Title" && path != module+"rewrite/launch" {
						t.Errorf("%s: meta.Title outside rewrite/launch: a launch call's V3 title is launch.Call.Annotate's", fset.Position(n.Pos()))
					}
				}
				return true
			})
		}
	}
	if !sawMeta {
		t.Fatal("rewrite/meta not among the packages found: the import paths are wrong")
	}
	if checked < 20 {
		t.Fatalf("only %d files of rewrite/ checked", checked)
	}
}

package main

import (
	"go/ast"
	"go/parser"
	gotoken "go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// goPackage is what TestPackageDocsNameWhatExists knows of one package of
// the module: its folder, its files, and the names it declares.
type goPackage struct {
	dir, name string
	files     map[string]bool // every file of the folder, by base name
	doc       string          // the package comment
	docFile   string          // the file that holds it
	// decls holds the package-level names; members the methods and
	// fields by their type's name ("Call" -> {"Annotate", "Snap", ...}).
	decls   map[string]bool
	members map[string]map[string]bool
}

// TestPackageDocsNameWhatExists: every package's comment is in its doc.go,
// and names only files and identifiers that exist, so that a newcomer led
// by a doc.go finds what it says. Checked in each package's comment:
//
//   - every word "name.go" (or "dir/name.go"): a file of the package's
//     folder, or a path from the repository's root or from that folder;
//   - every identifier in backquotes, `Name` or `X.Name`, and every
//     unquoted X.Name whose X is a package of the module or a type of the
//     package: X.Name a member of type X, a name package X declares, or a
//     name of the package itself; a lower-case `name` alone is left out
//     (in backquotes it is as often a JSON key or a method of ACP);
//   - every unquoted word spelled like a Go identifier of two or more
//     capitalized parts (SetSubagent, NewCalls): a name the package or
//     one of the module's packages declares, unless it is a product's name.
func TestPackageDocsNameWhatExists(t *testing.T) {
	pkgs := modulePackages(t)
	byName := map[string][]*goPackage{}
	for _, p := range pkgs {
		byName[p.name] = append(byName[p.name], p)
	}
	declaredAnywhere := func(name string) bool {
		return slices.ContainsFunc(pkgs, func(p *goPackage) bool { return p.decls[name] || hasMember(p, name) })
	}
	// resolve reports whether X.Name names something, seen from p; known
	// is false when X is neither a type of p nor a package of the module
	// (a JSON path such as rawInput.prompt, a package of the standard
	// library): nothing to check.
	resolve := func(p *goPackage, x, name string) (found, known bool) {
		if m, ok := p.members[x]; ok {
			return m[name], true
		}
		if others, ok := byName[x]; ok {
			return slices.ContainsFunc(others, func(o *goPackage) bool { return o.decls[name] || hasMember(o, name) }), true
		}
		return false, false
	}
	checked := 0
	for _, p := range pkgs {
		// One place to read: doc.go holds the package comment.
		if p.docFile != "doc.go" || !strings.HasPrefix(p.doc, "Package "+p.name+" ") && p.name != "main" {
			t.Errorf("%s: the package comment is in %q, not doc.go, or does not start \"Package %s\"", p.dir, p.docFile, p.name)
			continue
		}
		for _, file := range goFileWords.FindAllString(p.doc, -1) {
			checked++
			if !p.files[file] && !exists(filepath.Join(p.dir, file)) && !exists(filepath.Join(repoRoot, file)) {
				t.Errorf("%s: the package comment names %s, which does not exist", p.dir, file)
			}
		}
		for _, m := range backquoted.FindAllStringSubmatch(p.doc, -1) {
			x, name, qualified := strings.Cut(m[1], ".")
			switch {
			case qualified:
				checked++
				if found, known := resolve(p, x, name); known && !found {
					t.Errorf("%s: the package comment names `%s`, which does not exist", p.dir, m[1])
				}
			case unicode.IsUpper(rune(x[0])):
				checked++
				if !p.decls[x] && !hasMember(p, x) && !declaredAnywhere(x) {
					t.Errorf("%s: the package comment names `%s`, which does not exist", p.dir, x)
				}
			}
		}
		prose := backquoted.ReplaceAllString(p.doc, "")
		for _, m := range selector.FindAllStringSubmatch(prose, -1) {
			found, known := resolve(p, m[1], m[2])
			if !known && unicode.IsUpper(rune(m[1][0])) && !productNames[m[1]] {
				// Type.Name of a type the package does not declare.
				found, known = declaredAnywhere(m[1]) && slices.ContainsFunc(pkgs, func(o *goPackage) bool { return o.members[m[1]][m[2]] }), true
			}
			if known {
				checked++
				if !found {
					t.Errorf("%s: the package comment names %s.%s, which does not exist", p.dir, m[1], m[2])
				}
			}
		}
		for _, w := range camelWord.FindAllString(selector.ReplaceAllString(prose, ""), -1) {
			if productNames[w] {
				continue
			}
			checked++
			if !p.decls[w] && !hasMember(p, w) && !declaredAnywhere(w) {
				t.Errorf("%s: the package comment names %s, which does not exist", p.dir, w)
			}
		}
	}
	if checked < 60 {
		t.Fatalf("only %d names checked in the package comments of %d packages", checked, len(pkgs))
	}
}

var (
	goFileWords = regexp.MustCompile(`[\w./-]*\w\.go\b`)
	backquoted  = regexp.MustCompile("`([A-Za-z_]\\w*(?:\\.[A-Za-z_]\\w*)?)`")
	selector    = regexp.MustCompile(`\b([A-Za-z]\w*)\.([A-Z]\w*)\b`)
	camelWord   = regexp.MustCompile(`\b[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]+)+\b`)
)

// productNames are words of the package comments spelled like
// identifiers that name products and formats, not code.
var productNames = map[string]bool{
	"JetBrains": true, "OpenCode": true, "GitHub": true, "JavaScript": true, "TypeScript": true,
	"QwenCode": true, "ClaudeCode": true, "PowerShell": true, "MacOS": true,
}

func hasMember(p *goPackage, name string) bool {
	for _, m := range p.members {
		if m[name] {
			return true
		}
	}
	return false
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// modulePackages parses every package of the module (test files too: a
// comment may name a test) outside testdata folders.
func modulePackages(t *testing.T) []*goPackage {
	t.Helper()
	fset := gotoken.NewFileSet()
	byDir := map[string]*goPackage{}
	var order []*goPackage
	err := filepath.WalkDir(repoRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != repoRoot && (n == "testdata" || n == "node_modules" || strings.HasPrefix(n, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		dir := filepath.Dir(path)
		p := byDir[dir]
		if p == nil {
			p = &goPackage{dir: dir, files: map[string]bool{}, decls: map[string]bool{}, members: map[string]map[string]bool{}}
			byDir[dir] = p
			order = append(order, p)
		}
		p.files[d.Name()] = true
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		if !strings.HasSuffix(f.Name.Name, "_test") {
			p.name = f.Name.Name
		}
		if f.Doc != nil && !strings.HasSuffix(f.Name.Name, "_test") && (p.doc == "" || d.Name() == "doc.go") {
			p.doc, p.docFile = f.Doc.Text(), d.Name()
		}
		declare(p, f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var pkgs []*goPackage
	for _, p := range order {
		if p.name != "" {
			pkgs = append(pkgs, p)
		}
	}
	if len(pkgs) < 20 {
		t.Fatalf("only %d packages found under %s", len(pkgs), repoRoot)
	}
	return pkgs
}

// declare adds f's package-level names, methods and fields to p.
func declare(p *goPackage, f *ast.File) {
	member := func(typ, name string) {
		if p.members[typ] == nil {
			p.members[typ] = map[string]bool{}
		}
		p.members[typ][name] = true
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil || len(d.Recv.List) == 0 {
				p.decls[d.Name.Name] = true
				continue
			}
			if typ := receiverType(d.Recv.List[0].Type); typ != "" {
				member(typ, d.Name.Name)
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					p.decls[s.Name.Name] = true
					if p.members[s.Name.Name] == nil {
						p.members[s.Name.Name] = map[string]bool{}
					}
					switch typ := s.Type.(type) {
					case *ast.StructType:
						for _, fld := range typ.Fields.List {
							for _, n := range fld.Names {
								member(s.Name.Name, n.Name)
							}
							if len(fld.Names) == 0 { // embedded: its name
								member(s.Name.Name, receiverType(fld.Type))
							}
						}
					case *ast.InterfaceType:
						for _, m := range typ.Methods.List {
							for _, n := range m.Names {
								member(s.Name.Name, n.Name)
							}
						}
					}
				case *ast.ValueSpec:
					for _, n := range s.Names {
						p.decls[n.Name] = true
					}
				}
			}
		}
	}
}

// receiverType returns the name of a receiver's or embedded field's type
// (T, *T, T[K], pkg.T).
func receiverType(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.SelectorExpr:
			return x.Sel.Name
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}

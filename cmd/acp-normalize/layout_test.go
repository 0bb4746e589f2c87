package main

import (
	"bufio"
	"bytes"
	"go/ast"
	"go/parser"
	gotoken "go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/acp-normalize/acp-normalize/capture/scenario"
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/rewrite/methods"
	"github.com/acp-normalize/acp-normalize/rewrite/sessions"
)

// repoRoot is the repository's root, seen from this package.
const repoRoot = "../.."

// vendors returns the names of the vendor modules of the module list:
// every module but methods and sessions, which handle methods outside ACP
// and subagent sessions for every agent, and whose names are English words.
func vendors() []string {
	var names []string
	for _, m := range allModules() {
		if m.Name != methods.Name && m.Name != sessions.Name {
			names = append(names, m.Name)
		}
	}
	return names
}

// TestVendorNamesStayInTheirFolders: a vendor is its folder plus one line
// in the module list (modules.go), so that adding or removing one touches
// nothing else. The rule, precisely: in the repository's code (every .go
// file but tests, and every shell script, outside testdata/ folders) no
// identifier, string literal or import path names a vendor module, except
//
//   - in a vendor's own files, which may name any vendor (OpenCode has an
//     OPENCODE_DISABLE_CLAUDE_CODE): the files under a folder named after
//     it (rewrite/qwen/...) and the files named after it, "<vendor>.go",
//     "<vendor>.sh", "<vendor>_*" or "<vendor>-*", its part of a shared
//     package (capture/scenario/qwen.go, capture/agents/qwen.sh,
//     capture/qwen-pipeline.sh,
//     internal/benchharness/cursor.go; capture/fakemodel/gemini.go is the
//     Gemini API the Gemini CLI calls);
//   - in cmd/acp-normalize/modules.go, the module list.
//
// A name counts as a word of an identifier or literal, case-insensitively:
// words are split at non-letters and at lower-to-upper case changes, and
// any run of adjacent words counts ("OpenCode", "openCodeX" name opencode;
// "recursor" does not name cursor). Comments, tests, testdata (captures,
// goldens) and Markdown are free to name vendors: they document and check
// the vendors, they are not the code a new vendor would have to edit.
func TestVendorNamesStayInTheirFolders(t *testing.T) {
	vs := vendors()
	var bad []string
	err := filepath.WalkDir(repoRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != repoRoot && (name == "testdata" || name == "node_modules" || strings.HasPrefix(name, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(repoRoot, path)
		rel = filepath.ToSlash(rel)
		var names []token
		switch {
		case strings.HasSuffix(name, "_test.go"):
			return nil
		case strings.HasSuffix(name, ".go"):
			names = goNames(t, path)
		case strings.HasSuffix(name, ".sh"):
			names = shellNames(t, path)
		default:
			return nil
		}
		if rel == "cmd/acp-normalize/modules.go" || slices.ContainsFunc(vs, func(v string) bool { return vendorsFile(rel, v) }) {
			return nil
		}
		for _, tok := range names {
			for _, v := range vs {
				if namesVendor(tok.text, v) {
					bad = append(bad, rel+":"+tok.line+": "+v+" in "+tok.text)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(bad) > 0 {
		t.Errorf("vendor names outside their folders and the module list (move the code into the vendor's folder or a file named after it, or derive it from the module list):\n%s", strings.Join(bad, "\n"))
	}
}

// token is an identifier or literal of a code file, with its line.
type token struct{ text, line string }

// goNames returns the identifiers and string literals (import paths
// included) of a Go file; comments are left out.
func goNames(t *testing.T, path string) []token {
	fset := gotoken.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	var toks []token
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.Ident:
			toks = append(toks, token{n.Name, strconv.Itoa(fset.Position(n.Pos()).Line)})
		case *ast.BasicLit:
			if n.Kind == gotoken.STRING {
				toks = append(toks, token{n.Value, strconv.Itoa(fset.Position(n.Pos()).Line)})
			}
		}
		return true
	})
	return toks
}

// shellNames returns a shell script's lines without their comments.
func shellNames(t *testing.T, path string) []token {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var toks []token
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line, _, _ := strings.Cut(sc.Text(), "#")
		toks = append(toks, token{line, strconv.Itoa(n)})
	}
	return toks
}

// namesVendor reports whether s names vendor v as a run of its words.
func namesVendor(s, v string) bool {
	words := splitWords(s)
	for i := range words {
		run := ""
		for _, w := range words[i:] {
			run += w
			if run == v {
				return true
			}
			if len(run) >= len(v) {
				break
			}
		}
	}
	return false
}

// splitWords splits s into lower-case words at non-letters and before an
// upper-case letter that follows a lower-case one.
func splitWords(s string) []string {
	var words []string
	var cur []rune
	prev := rune(0)
	flush := func() {
		if len(cur) > 0 {
			words = append(words, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	for _, r := range s {
		switch {
		case !unicode.IsLetter(r):
			flush()
		case unicode.IsUpper(r) && unicode.IsLower(prev):
			flush()
			cur = append(cur, r)
		default:
			cur = append(cur, r)
		}
		prev = r
	}
	flush()
	return words
}

// vendorsFile reports whether the file at rel (slash-separated, from the
// root) is vendor v's: under a folder named v, or named after v.
func vendorsFile(rel, v string) bool {
	parts := strings.Split(rel, "/")
	if slices.Contains(parts[:len(parts)-1], v) {
		return true
	}
	base := parts[len(parts)-1]
	return base == v+".go" || base == v+".sh" || strings.HasPrefix(base, v+"_") || strings.HasPrefix(base, v+"-")
}

func TestNamesVendor(t *testing.T) {
	for _, tt := range []struct {
		s, v string
		want bool
	}{
		{"cursor", "cursor", true},
		{`"cursor/task"`, "cursor", true},
		{"cursorTask", "cursor", true},
		{"CursorTask", "cursor", true},
		{"OpenCode", "opencode", true},
		{"openCodeRun", "opencode", true},
		{`"@qwen-code/qwen-code"`, "qwen", true},
		{"recursor", "cursor", false},
		{"cursors", "cursor", false},
		{"openCoder", "opencode", false},
		{"claudeCode", "claude", true},
		{"codexes", "codex", false},
	} {
		if got := namesVendor(tt.s, tt.v); got != tt.want {
			t.Errorf("namesVendor(%q, %q) = %v, want %v", tt.s, tt.v, got, tt.want)
		}
	}
}

// TestVendorLists: every list of vendors outside the module list derives
// from it. The capture rig's scenarios (capture/scenario, one method per
// vendor), its scripts (capture/agents/<vendor>.sh, which `make
// captures` lists by file name) and the recordings
// (testdata/captures/<vendor>/) name vendor modules only, and a vendor with
// a script has scenarios and the other way round. Every module has its
// folder, its golden cases, a fuzz target named after it (Fuzz<Name>,
// any case) and an interface guard for each rewrite interface its
// rewriter implements (the router finds ResponseHandler and Closer by a
// type assertion, which a changed signature would silently fail).
func TestVendorLists(t *testing.T) {
	vs := vendors()
	scripts := filesNamed(t, filepath.Join(repoRoot, "capture", "agents", "*.sh"), ".sh")
	scripts = slices.DeleteFunc(scripts, func(s string) bool { return s == "lib" })
	for _, s := range scripts {
		if !slices.Contains(vs, s) {
			t.Errorf("capture/agents/%s.sh names no vendor module (have %s)", s, strings.Join(vs, ", "))
		}
	}
	if got := scenario.Vendors(); !slices.Equal(got, scripts) {
		t.Errorf("capture scenarios of %v, scripts of %v: every recorded vendor needs both", got, scripts)
	}
	dirs, err := os.ReadDir(filepath.Join(repoRoot, "testdata", "captures"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		if d.IsDir() && !slices.Contains(vs, d.Name()) {
			t.Errorf("testdata/captures/%s names no vendor module", d.Name())
		}
	}
	for _, m := range allModules() {
		dir := filepath.Join(repoRoot, "rewrite", m.Name)
		if golden, _ := filepath.Glob(filepath.Join(dir, "testdata", "golden", "*.txtar")); len(golden) == 0 {
			t.Errorf("module %s: no golden cases in rewrite/%s/testdata/golden", m.Name, m.Name)
		}
		if !hasFuzzTarget(t, dir, "Fuzz"+m.Name) {
			t.Errorf("module %s: no fuzz target Fuzz%s (any case) in rewrite/%s", m.Name, m.Name, m.Name)
		}
		guards := interfaceGuards(t, dir)
		rw := m.New(rewrite.Env{})
		for name, implemented := range map[string]bool{
			"Rewriter":        true,
			"ResponseHandler": is[rewrite.ResponseHandler](rw),
			"Closer":          is[rewrite.Closer](rw),
		} {
			if implemented && !guards[name] {
				t.Errorf("module %s implements rewrite.%s without an interface guard (var _ rewrite.%s = (*rewriter)(nil))", m.Name, name, name)
			}
		}
	}
}

func is[I any](v any) bool {
	_, ok := v.(I)
	return ok
}

// interfaceGuards returns the rewrite interfaces named by "var _
// rewrite.X = ..." declarations in the non-test files of dir.
func interfaceGuards(t *testing.T, dir string) map[string]bool {
	files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	guards := map[string]bool{}
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(gotoken.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			vs, ok := n.(*ast.ValueSpec)
			if !ok || len(vs.Names) != 1 || vs.Names[0].Name != "_" {
				return true
			}
			if sel, ok := vs.Type.(*ast.SelectorExpr); ok {
				if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "rewrite" {
					guards[sel.Sel.Name] = true
				}
			}
			return true
		})
	}
	return guards
}

// filesNamed returns the base names, without ext, of the files matching
// pattern, sorted.
func filesNamed(t *testing.T, pattern, ext string) []string {
	paths, err := filepath.Glob(pattern)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range paths {
		names = append(names, strings.TrimSuffix(filepath.Base(p), ext))
	}
	slices.Sort(names)
	return names
}

// hasFuzzTarget reports whether a test file of dir declares a function
// named name, in any case.
func hasFuzzTarget(t *testing.T, dir, name string) bool {
	files, _ := filepath.Glob(filepath.Join(dir, "*_test.go"))
	for _, path := range files {
		f, err := parser.ParseFile(gotoken.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && strings.EqualFold(fn.Name.Name, name) {
				return true
			}
		}
	}
	return false
}

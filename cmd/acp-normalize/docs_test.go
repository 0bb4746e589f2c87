package main

import (
	"go/ast"
	"go/doc"
	"go/parser"
	gotoken "go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// outsideReferences are what a reader of the repository cannot open: the
// numbers of the issues the project was built from (the tracker is not
// part of the repository; docs/contract.md's rule numbers are the
// references), and the steering folder beside the checkout. Each is
// written so that this file does not match it.
var outsideReferences = []struct {
	name string
	re   *regexp.Regexp
}{
	{"an issue number", regexp.MustCompile(`(?i)\bissues?\s+#?[0-9]+`)},
	{"the folder beside the repository", regexp.MustCompile(`\.\.` + `/shared\b`)},
	{"the steering folder", regexp.MustCompile(`\bshared/(docs|captures|acp-schema)\b|/work/(shared|main|wt)\b`)},
	{"a contract that is not in the repository", regexp.MustCompile(`(?i)\bshared\s+contract`)},
}

// commentMarks are what starts a continued comment line: a reference
// wrapped over two lines ("issue" at the end of one, "14" starting the
// next) is one reference once they are joined.
var commentMarks = regexp.MustCompile(`[ \t]*\r?\n[ \t]*(//|#|\*|--)?[ \t]*`)

// TestDocsStandAlone: no doc, comment, help text or testdata README
// points where a reader of the repository cannot follow (see
// outsideReferences). Captures, schemas and other data are not prose and
// are left out; so are the dependencies npm installs.
func TestDocsStandAlone(t *testing.T) {
	t.Parallel()
	prose := map[string]bool{".md": true, ".go": true, ".txt": true, ".txtar": true, ".sh": true,
		".js": true, ".mjs": true, ".ts": true, ".css": true, ".html": true, ".conf": true, ".yml": true, ".yaml": true}
	var checked int
	err := filepath.WalkDir(repoRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != repoRoot && (strings.HasPrefix(name, ".") && name != ".ci" || name == "node_modules" || name == "bin" || name == "dist") {
				return filepath.SkipDir
			}
			return nil
		}
		if !prose[filepath.Ext(name)] && name != "Makefile" && name != "run" {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		checked++
		text := commentMarks.ReplaceAllString(string(b), " ")
		for _, ref := range outsideReferences {
			for _, m := range ref.re.FindAllString(text, -1) {
				rel, _ := filepath.Rel(repoRoot, path)
				t.Errorf("%s names %s: %q (cite a rule of docs/contract.md, or say what it means)", rel, ref.name, m)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("only %d files checked: is %s the repository?", checked, repoRoot)
	}
}

// TestDocsStandAloneCatches: the patterns find what they are for,
// wrapped over comment lines too, and leave alone what only looks close.
func TestDocsStandAloneCatches(t *testing.T) {
	tests := []struct {
		name, text string
		found      bool
	}{
		{"issue number", "as asked (iss" + "ue 14)", true},
		{"issue and item", "// Iss" + "ue 8 item 5: the capture", true},
		{"wrapped over comment lines", "byte-identical (iss" + "ue\n// 19: -trimpath", true},
		{"issues plural", "see iss" + "ues 3 and 4", true},
		{"folder beside", "documented in `../" + "shared/" + "docs/acp-wire-facts.md`", true},
		{"steering folder", "copied from `shared/" + "captures/claude/`", true},
		{"contract outside", "the shared\ncontract's rules", true},
		{"the tracker's address", "https://github.com/acp-normalize/acp-normalize/issues", false},
		{"an upstream pull request", "its PR #728, still open", false},
		{"a word", "a tissue of 14 lies", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text := commentMarks.ReplaceAllString(tt.text, " ")
			found := false
			for _, ref := range outsideReferences {
				found = found || ref.re.MatchString(text)
			}
			if found != tt.found {
				t.Errorf("%q: found %v, want %v", tt.text, found, tt.found)
			}
		})
	}
}

// TestContributingExamples: every Example function docs/contributing.md
// names exists, in the package it names, with the output it must print
// (so `go test -run Example` runs and checks it).
func TestContributingExamples(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join(repoRoot, "docs", "contributing.md"))
	if err != nil {
		t.Fatal(err)
	}
	// "`ExampleA` and `ExampleB` in `pkg`", "`ExampleC` in `pkg`".
	mention := regexp.MustCompile("((?:`Example\\w+`(?:,| and| or)?\\s+)+)in\\s+`([\\w/]+)`")
	names := regexp.MustCompile("`(Example\\w+)`")
	text := strings.Join(strings.Fields(string(b)), " ")
	var found int
	for _, m := range mention.FindAllStringSubmatch(text, -1) {
		examples := packageExamples(t, filepath.Join(repoRoot, filepath.FromSlash(m[2])))
		for _, n := range names.FindAllStringSubmatch(m[1], -1) {
			found++
			ex, ok := examples[strings.TrimPrefix(n[1], "Example")]
			switch {
			case !ok:
				t.Errorf("docs/contributing.md names %s in %s: no such example there", n[1], m[2])
			case ex.Output == "" && !ex.EmptyOutput:
				t.Errorf("%s in %s has no // Output: comment: go test compiles it but does not run it", n[1], m[2])
			}
		}
	}
	if found == 0 {
		t.Fatal("docs/contributing.md names no example (`ExampleX` in `pkg`)")
	}
}

// packageExamples are the examples of the package in dir's test files,
// by name without "Example".
func packageExamples(t *testing.T, dir string) map[string]*doc.Example {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset := gotoken.NewFileSet()
	var parsed []*ast.File
	for _, f := range files {
		af, err := parser.ParseFile(fset, f, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		parsed = append(parsed, af)
	}
	examples := map[string]*doc.Example{}
	for _, ex := range doc.Examples(parsed...) {
		examples[ex.Name] = ex
	}
	return examples
}

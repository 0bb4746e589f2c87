package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// mdLink is an inline markdown link or image: [text](target) or
// ![alt](target), target without spaces (an optional "title" after it is
// left out).
var mdLink = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)

// headingAnchors are the anchors GitHub gives the headings of a markdown
// page: each heading's slug, a repeated one suffixed -1, -2, ...
// Headings inside fenced code blocks are not headings.
func headingAnchors(text string) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	fence := ""
	for _, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			fence = trimmed[:3]
			continue
		}
		if !strings.HasPrefix(line, "#") {
			continue
		}
		title := strings.TrimLeft(line, "#")
		if len(line)-len(title) > 6 || title != "" && title[0] != ' ' {
			continue
		}
		slug := githubSlug(title)
		if n := seen[slug]; n > 0 {
			anchors[slug+"-"+strconv.Itoa(n)] = true
		} else {
			anchors[slug] = true
		}
		seen[slug]++
	}
	return anchors
}

// githubSlug is GitHub's anchor for a heading: lower case, markup and
// punctuation gone (letters, digits, "-" and "_" stay), spaces made "-".
func githubSlug(title string) string {
	title = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`).ReplaceAllString(title, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(title)) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

// TestDocLinksResolve: every relative link of the repository's Markdown
// (README.md, docs/*.md, the testdata and tool READMEs) names a file or
// folder of the repository, and its #anchor a heading of that page, so a
// reader who follows one lands where it says.
func TestDocLinksResolve(t *testing.T) {
	t.Parallel()
	var pages []string
	err := filepath.WalkDir(repoRoot, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != repoRoot && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules" || d.Name() == "bin" || d.Name() == "dist") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(d.Name(), ".md") {
			pages = append(pages, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	anchorsOf := map[string]map[string]bool{}
	anchors := func(page string) map[string]bool {
		if a, ok := anchorsOf[page]; ok {
			return a
		}
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		anchorsOf[page] = headingAnchors(string(b))
		return anchorsOf[page]
	}
	var links int
	for _, page := range pages {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(repoRoot, page)
		for _, m := range mdLink.FindAllStringSubmatch(string(b), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			links++
			path, anchor, _ := strings.Cut(target, "#")
			file := page
			if path != "" {
				file = filepath.Join(filepath.Dir(page), filepath.FromSlash(path))
				if _, err := os.Stat(file); err != nil {
					t.Errorf("%s links to %s: no such file", rel, target)
					continue
				}
			}
			if anchor == "" {
				continue
			}
			if !strings.HasSuffix(file, ".md") {
				t.Errorf("%s links to %s: an anchor in a file that is not markdown", rel, target)
				continue
			}
			if !anchors(file)[anchor] {
				t.Errorf("%s links to %s: no heading of %s has the anchor #%s", rel, target, filepath.Base(file), anchor)
			}
		}
	}
	if links < 20 {
		t.Fatalf("only %d relative links found: is %s the repository?", links, repoRoot)
	}
}

// TestGithubSlug: the anchors as GitHub makes them, for the kinds of
// headings the docs have.
func TestGithubSlug(t *testing.T) {
	for _, tc := range []struct{ name, title, want string }{
		{"words", " Editor setup", "editor-setup"},
		{"code and parentheses", " Cursor (`cursor-agent acp`)", "cursor-cursor-agent-acp"},
		{"comma", " Subagent sessions, for every agent", "subagent-sessions-for-every-agent"},
		{"colon", " Every agent: methods no client knows", "every-agent-methods-no-client-knows"},
		{"dash kept, en dash gone", " K1–K3 and set-up", "k1k3-and-set-up"},
		{"link text kept", " See [the rules](contract.md)", "see-the-rules"},
		{"underscore kept", " _meta fields", "_meta-fields"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := githubSlug(tc.title); got != tc.want {
				t.Errorf("githubSlug(%q) = %q, want %q", tc.title, got, tc.want)
			}
		})
	}
	if a := headingAnchors("# A\n```\n# B\n```\n## A\n"); !a["a"] || !a["a-1"] || a["b"] {
		t.Errorf("headingAnchors: %v, want a and a-1 (the repeated heading), not b (in a fence)", a)
	}
}

// TestContributingPathsExist: the files and folders docs/contributing.md
// names in backquotes exist, so a contributor who opens one finds it: a
// path under a folder of the repository matches something (globs
// allowed), and a bare file name such as a golden case's is some file's
// name. The new vendor's files the guide walks through (acme, <vendor>)
// are left out: they are the ones to write.
func TestContributingPathsExist(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join(repoRoot, "docs", "contributing.md"))
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	err = filepath.WalkDir(repoRoot, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == ".git") {
			return filepath.SkipDir
		}
		names[d.Name()] = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	fileName := regexp.MustCompile(`^[\w.*-]+\.(go|sh|md|txtar|golden|conf)$`)
	var checked int
	for _, m := range regexp.MustCompile("`([^`\\s]+)`").FindAllStringSubmatch(string(b), -1) {
		name := m[1]
		if strings.ContainsAny(name, `<{"`) || strings.Contains(name, "acme") || strings.HasPrefix(name, ".") && !strings.HasPrefix(name, ".ci/") {
			continue
		}
		first, _, nested := strings.Cut(name, "/")
		switch {
		case nested:
			if fi, err := os.Stat(filepath.Join(repoRoot, first)); err != nil || !fi.IsDir() || first == "bin" {
				continue // not a path of the repository (an import path, a method name)
			}
			checked++
			matches, err := filepath.Glob(filepath.Join(repoRoot, filepath.FromSlash(strings.TrimSuffix(name, "/"))))
			if err != nil || len(matches) == 0 {
				t.Errorf("docs/contributing.md names %s: nothing in the repository matches it", name)
			}
		case fileName.MatchString(name) && !strings.Contains(name, "*"):
			checked++
			if !names[name] {
				t.Errorf("docs/contributing.md names %s: no file of the repository has that name", name)
			}
		}
	}
	if checked < 30 {
		t.Fatalf("only %d paths checked in docs/contributing.md", checked)
	}
}

// TestReadmeLayoutNamesEveryPackage: the README's layout paragraph
// ("Layout, bottom floor first") names every package under rewrite/ and
// internal/, so a reader who learns the tree from it misses none of them.
func TestReadmeLayoutNamesEveryPackage(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, layout, ok := strings.Cut(string(b), "Layout, bottom floor first")
	layout, _, _ = strings.Cut(layout, "The contract, rule by rule")
	if !ok {
		t.Fatal(`README.md has no paragraph "Layout, bottom floor first"`)
	}
	for _, parent := range []string{"rewrite", "internal"} {
		dirs, err := os.ReadDir(filepath.Join(repoRoot, parent))
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range dirs {
			if !d.IsDir() || d.Name() == "testdata" {
				continue
			}
			if gos, _ := filepath.Glob(filepath.Join(repoRoot, parent, d.Name(), "*.go")); len(gos) == 0 {
				continue
			}
			path := parent + "/" + d.Name()
			if !strings.Contains(layout, "`"+path+"`") && !strings.Contains(layout, "`"+path+"/`") &&
				!(parent == "rewrite" && strings.Contains(layout, "`"+d.Name()+"`")) {
				t.Errorf("README.md's layout paragraph does not name %s", path)
			}
		}
	}
}

package release

import (
	"os"
	"regexp"
	"testing"
)

func TestAbsoluteLinks(t *testing.T) {
	const c = "0123abc"
	for _, tc := range []struct{ name, in, want string }{
		{"doc page", "see [Cursor](docs/cursor.md).", "see [Cursor](" + repoWeb + "/blob/0123abc/docs/cursor.md)."},
		{"fragment kept", "[set up](docs/qwen.md#set-up)", "[set up](" + repoWeb + "/blob/0123abc/docs/qwen.md#set-up)"},
		{"folder", "[probes](capture/probes/)", "[probes](" + repoWeb + "/tree/0123abc/capture/probes/)"},
		{"image shows from raw", "![viewer](docs/viewer.png)", "![viewer](" + repoWeb + "/raw/0123abc/docs/viewer.png)"},
		{"dot slash", "[x](./docs/a.md)", "[x](" + repoWeb + "/blob/0123abc/docs/a.md)"},
		{"carried files stay", "[license](LICENSE), [changes](CHANGELOG.md), [top](README.md#install)", "[license](LICENSE), [changes](CHANGELOG.md), [top](README.md#install)"},
		{"same page", "[install](#install)", "[install](#install)"},
		{"web address", "[zed](https://zed.dev/docs)", "[zed](https://zed.dev/docs)"},
		{"mail", "[me](mailto:a@b.c)", "[me](mailto:a@b.c)"},
		{"site root", "[x](/docs/a.md)", "[x](/docs/a.md)"},
		{"two on a line", "[a](docs/a.md) and [b](docs/b.md)", "[a](" + repoWeb + "/blob/0123abc/docs/a.md) and [b](" + repoWeb + "/blob/0123abc/docs/b.md)"},
		{"not a link", "a [b] (docs/c.md) and f(x)", "a [b] (docs/c.md) and f(x)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(absoluteLinks([]byte(tc.in), c)); got != tc.want {
				t.Errorf("absoluteLinks(%q)\n got %q\nwant %q", tc.in, got, tc.want)
			}
		})
	}
}

// TestReleasedReadmeLinksResolve: the README as an archive carries it
// links only to files the archive holds, or to absolute addresses.
func TestReleasedReadmeLinksResolve(t *testing.T) {
	d, err := readDocs("../..", "0123abc")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`\]\(([^)\s]+)\)`).FindAllSubmatch(d.readme, -1) {
		target := string(m[1])
		if relative(target) {
			path := regexp.MustCompile(`#.*`).ReplaceAllString(target, "")
			if path != "" && !carried(path) {
				t.Errorf("the released README links to %s, which the archive does not carry", target)
			}
		}
	}
	orig, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(d.readme) <= len(orig) {
		t.Errorf("the README has links to docs/, but the released one is no longer (%d vs %d bytes)", len(d.readme), len(orig))
	}
}

package release

import (
	"bytes"
	"regexp"
	"strings"
)

// repoWeb is the repository's web address, where the README's links to
// files that no archive or package carries lead instead.
const repoWeb = "https://github.com/acp-normalize/acp-normalize"

// carried says whether every archive and npm package holds the file
// beside the binary (see readDocs): the README's links to it stay relative.
func carried(path string) bool {
	return path == "README.md" || path == "LICENSE" || path == "CHANGELOG.md"
}

// markdownLink is an inline link or image: [text](target) or ![alt](target).
var markdownLink = regexp.MustCompile(`(!?)\[([^\]\n]*)\]\(([^)\s]+)\)`)

// absoluteLinks rewrites the README's relative links to repository files
// (docs/..., capture/...) as links into the repository at the release's
// commit: an archive or npm package carries README.md, LICENSE and
// CHANGELOG.md only, so docs/cursor.md would lead nowhere there (or, on
// the npm registry's page, to a guess). The commit, not a tag, so that a
// trial release's links resolve too. Images use the raw address, so they
// still show.
func absoluteLinks(readme []byte, commit string) []byte {
	return markdownLink.ReplaceAllFunc(readme, func(m []byte) []byte {
		sub := markdownLink.FindSubmatch(m)
		image, text, target := len(sub[1]) > 0, sub[2], string(sub[3])
		if !relative(target) {
			return m
		}
		path, fragment, _ := strings.Cut(target, "#")
		path = strings.TrimPrefix(path, "./")
		if path == "" || carried(path) {
			return m
		}
		kind := "blob"
		switch {
		case image:
			kind = "raw"
		case strings.HasSuffix(path, "/"):
			kind = "tree"
		}
		abs := repoWeb + "/" + kind + "/" + commit + "/" + path
		if fragment != "" {
			abs += "#" + fragment
		}
		var b bytes.Buffer
		b.Write(sub[1])
		b.WriteByte('[')
		b.Write(text)
		b.WriteString("](")
		b.WriteString(abs)
		b.WriteByte(')')
		return b.Bytes()
	})
}

// relative says whether a link target names a file of the repository:
// not an address with a scheme, not a fragment of the same page, not a
// path from the root of a site.
func relative(target string) bool {
	return !strings.Contains(target, ":") && !strings.HasPrefix(target, "#") && !strings.HasPrefix(target, "/")
}

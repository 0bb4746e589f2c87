package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/acp-normalize/acp-normalize/internal/release"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("acp-release", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	version := fs.String("version", "", "the release's version, x.y.z (required)")
	out := fs.String("out", "dist", "the directory to write (replaced if it holds an earlier release)")
	platforms := fs.String("platforms", "", "GOOS/GOARCH list, space- or comma-separated (required)")
	root := fs.String("root", ".", "the module root, a git work tree")
	dirty := fs.Bool("allow-dirty", false, "a trial build, not a release: uncommitted changes allowed, the tag and CHANGELOG.md not checked")
	if err := fs.Parse(args); err != nil || fs.NArg() > 0 || *version == "" || *platforms == "" {
		msg := "usage: acp-release --version x.y.z --platforms \"linux/amd64 ...\" [--out dist] [--allow-dirty]"
		if err != nil {
			msg = err.Error() + "; " + msg
		}
		fmt.Fprintln(stderr, "acp-release:", msg)
		return 2
	}
	var list []release.Platform
	for _, s := range strings.FieldsFunc(*platforms, func(r rune) bool { return r == ' ' || r == ',' }) {
		p, err := release.ParsePlatform(s)
		if err != nil {
			fmt.Fprintln(stderr, "acp-release:", err)
			return 2
		}
		list = append(list, p)
	}
	res, err := release.Build(release.Config{
		Root: *root, Version: strings.TrimPrefix(*version, "v"), Out: *out, Platforms: list,
		AllowDirty: *dirty, Log: stderr,
	})
	if err != nil {
		fmt.Fprintln(stderr, "acp-release:", err)
		return 1
	}
	fmt.Fprintf(stdout, "%s (commit %s, %s)\n", filepath.Join(*out, "SHA256SUMS"), res.Source.Commit[:12], res.Source.Time.Format("2006-01-02T15:04:05Z"))
	_, _ = stdout.Write(res.Sums)
	fmt.Fprintf(stdout, "npm packages, to publish in this order: %s\n", strings.Join(release.Packages(res.NPM, list), " "))
	return 0
}

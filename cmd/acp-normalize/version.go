package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/urfave/cli/v2"
	"golang.org/x/mod/module"

	"github.com/acp-normalize/acp-normalize/internal/terminal"
)

// Stamped by the release build (internal/release: -ldflags -X) from git,
// for builds whose build info has no VCS data (a git worktree, a source
// tree without .git). Empty otherwise; never edited by hand.
var (
	releaseVersion string // x.y.z
	releaseCommit  string // full commit hash
	releaseDate    string // the commit's time, RFC 3339
	// releaseModified is "true" for a build of a tree with uncommitted
	// changes (tests of the release only: a release refuses them).
	releaseModified string
)

// develVersion is the version of a build that carries none: built with
// -buildvcs=false, from a source tree without VCS data, or a test binary.
const develVersion = "0.0.0-devel"

// version is this build's semantic version, advertised in initialize
// (rule M) and printed by --version. It is read from the build info once.
var version = readBuild().Version

// buildInfo is what `acp-normalize version` prints.
type buildInfo struct {
	Version  string `json:"version"`
	Commit   string `json:"commit,omitempty"`
	Date     string `json:"date,omitempty"`
	Modified bool   `json:"modified,omitempty"`
	Go       string `json:"go"`
	Platform string `json:"platform"`
}

// readBuild reads the version from the build info: `go install
// ...@v1.2.3` and builds in a git clone of a tag say v1.2.3, other
// builds in a clone say a pseudo-version (v0.0.0-DATE-COMMIT, +dirty for
// uncommitted changes), `make release VERSION=x.y.z` stamps x.y.z. Commit
// and date are the build info's VCS data, else what the release stamped,
// else what a pseudo-version names.
func readBuild() buildInfo {
	b := buildInfo{Version: develVersion, Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	bi, ok := debug.ReadBuildInfo()
	if ok {
		b.Go = bi.GoVersion
		if v := bi.Main.Version; v != "" && v != "(devel)" {
			b.Version = strings.TrimPrefix(v, "v")
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				b.Commit = s.Value
			case "vcs.time":
				b.Date = s.Value
			case "vcs.modified":
				b.Modified = s.Value == "true"
			}
		}
	}
	if releaseVersion != "" {
		b.Version = releaseVersion
	}
	if b.Commit == "" {
		b.Commit, b.Date, b.Modified = releaseCommit, releaseDate, releaseModified == "true"
	}
	if b.Commit == "" {
		b.Commit = pseudoVersionCommit(b.Version)
	}
	return b
}

// pseudoVersionCommit returns the commit prefix a Go pseudo-version names
// (0.0.0-20261201120000-abcdef123456, as the build info spells it without
// its "v"), or "".
func pseudoVersionCommit(v string) string {
	rev, err := module.PseudoVersionRev("v" + v)
	if err != nil {
		return ""
	}
	return rev
}

// String is the one line of --version: the version, then the commit, its
// date (the build's date: release builds are reproducible, so the only
// time in them is the commit's) and the toolchain.
func (b buildInfo) String() string {
	commit := "commit unknown"
	if b.Commit != "" {
		commit = "commit " + b.Commit
		if len(b.Commit) > 12 {
			commit = "commit " + b.Commit[:12]
		}
		if b.Modified {
			commit += " with uncommitted changes"
		}
	}
	details := []string{commit}
	if b.Date != "" {
		details = append(details, b.Date)
	}
	details = append(details, b.Go+" "+b.Platform)
	return fmt.Sprintf("acp-normalize %s (%s)", b.Version, strings.Join(details, ", "))
}

// printVersion writes the --version line.
func printVersion(w io.Writer) error {
	_, err := fmt.Fprintln(w, readBuild().String())
	return err
}

// versionFlag is the top-level --version (urfave's own prints only the
// version; this one says which commit).
func versionFlag() cli.Flag {
	return &cli.BoolFlag{Name: "version", Aliases: []string{"v"}, Usage: "print the version, commit and build date"}
}

// versionCommand is `acp-normalize version`, the same as --version.
func versionCommand(st streams) *cli.Command {
	return &cli.Command{
		Name:      "version",
		Usage:     "print the version, commit and build date",
		ArgsUsage: " ",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "json", Usage: "print it as a JSON object"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageError("version: takes no arguments, got %q", c.Args().First())
			}
			if c.Bool("json") {
				return writeJSON(st.stdout, readBuild())
			}
			return printVersion(st.stdout)
		},
	}
}

// writeJSON writes v as one indented JSON object.
func writeJSON(w io.Writer, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	// Strings may hold an agent's words: what could steer a terminal is
	// written as a JSON escape, which means the same.
	_, err := w.Write(terminal.JSON(buf.Bytes()))
	return err
}

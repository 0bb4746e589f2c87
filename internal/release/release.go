package release

import (
	"bytes"
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/mod/semver"
)

// Command is the main package that is released, relative to the module root.
const Command = "./cmd/acp-normalize"

// Name is the command's name: of the binary, the archives and the npm
// launcher package.
const Name = "acp-normalize"

// Module is the Go module path (for go install and the version stamps).
const Module = "github.com/acp-normalize/acp-normalize"

// Platform is one GOOS/GOARCH the release carries a binary for.
type Platform struct{ OS, Arch string }

// ParsePlatform parses "linux/amd64".
func ParsePlatform(s string) (Platform, error) {
	os, arch, ok := strings.Cut(strings.TrimSpace(s), "/")
	p := Platform{os, arch}
	if !ok || p.npmOS() == "" || p.npmCPU() == "" {
		return Platform{}, fmt.Errorf("platform %q: want GOOS/GOARCH of linux, darwin or windows and amd64 or arm64", s)
	}
	return p, nil
}

func (p Platform) String() string { return p.OS + "/" + p.Arch }

// exe is the binary's file name on the platform.
func (p Platform) exe() string {
	if p.OS == "windows" {
		return Name + ".exe"
	}
	return Name
}

// npmOS and npmCPU are Node's process.platform and process.arch for the
// platform, as npm's os and cpu fields spell them.
func (p Platform) npmOS() string {
	return map[string]string{"linux": "linux", "darwin": "darwin", "windows": "win32"}[p.OS]
}

func (p Platform) npmCPU() string {
	return map[string]string{"amd64": "x64", "arm64": "arm64"}[p.Arch]
}

// archiveName is the archive's base name without extension, also the
// directory its files are in.
func (p Platform) archiveName(version string) string {
	return fmt.Sprintf("%s_%s_%s_%s", Name, version, p.OS, p.Arch)
}

// Config says what to build.
type Config struct {
	// Root is the module root, a git work tree.
	Root string
	// Version is the release's semantic version, x.y.z or x.y.z-pre.
	Version string
	// Out is the directory to write; it must not exist, be empty, or be
	// an earlier release output (it holds SHA256SUMS), which is replaced.
	Out       string
	Platforms []Platform
	// AllowDirty makes a trial build, never a release: from a tree with
	// uncommitted changes (the binaries say so), without the checks that
	// tie the version to the commit (its tag, its CHANGELOG.md entry).
	AllowDirty bool
	// Go is the go command; "go" when empty.
	Go string
	// Log receives one line per step; nil for none.
	Log io.Writer
}

// Result is what a release wrote.
type Result struct {
	Source Source
	// Archives are the archive file names in Out, sorted.
	Archives []string
	// Sums is the content of SHA256SUMS.
	Sums []byte
	// Binaries are the built binaries by platform ("linux/amd64"): the
	// copies inside the npm platform packages.
	Binaries map[string]string
	// NPM is the directory holding the npm packages, one per directory.
	NPM string
}

// Source is the commit a release is built from.
type Source struct {
	Commit string
	Time   time.Time
	Dirty  bool
}

// isVersion reports whether v is a release version: semantic
// versioning's MAJOR.MINOR.PATCH with an optional pre-release, no leading
// "v", no build metadata (what x/mod's semver calls canonical, "v" aside).
func isVersion(v string) bool {
	return !strings.HasPrefix(v, "v") && semver.Canonical("v"+v) == "v"+v
}

// Build builds the release described by cfg.
func Build(cfg Config) (*Result, error) {
	if cfg.Go == "" {
		cfg.Go = "go"
	}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	if !isVersion(cfg.Version) {
		return nil, fmt.Errorf("version %q is not x.y.z (semantic versioning, no leading v)", cfg.Version)
	}
	if len(cfg.Platforms) == 0 {
		return nil, errors.New("no platforms")
	}
	root, err := filepath.Abs(cfg.Root)
	if err != nil {
		return nil, err
	}
	src, err := readSource(root)
	if err != nil {
		return nil, err
	}
	if !cfg.AllowDirty {
		if src.Dirty {
			return nil, errors.New("the work tree has uncommitted changes: commit them (a release is built from a commit), or make a trial build")
		}
		if err := checkTag(root, cfg.Version, src.Commit); err != nil {
			return nil, err
		}
		if err := checkChangelog(filepath.Join(root, "CHANGELOG.md"), cfg.Version); err != nil {
			return nil, err
		}
	}
	if err := prepareOut(cfg.Out); err != nil {
		return nil, err
	}
	res := &Result{Source: src, Binaries: map[string]string{}, NPM: filepath.Join(cfg.Out, "npm")}
	docs, err := readDocs(root, src.Commit)
	if err != nil {
		return nil, err
	}
	build := filepath.Join(cfg.Out, ".build")
	defer os.RemoveAll(build)
	for _, p := range cfg.Platforms {
		bin := filepath.Join(build, p.OS+"_"+p.Arch, p.exe())
		start := time.Now()
		if err := buildBinary(cfg, root, src, p, bin); err != nil {
			return nil, err
		}
		name, err := writeArchive(cfg.Out, cfg.Version, p, bin, docs, src.Time)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(cfg.Log, "%s: %s (%s)\n", p, name, time.Since(start).Round(time.Millisecond))
		res.Archives = append(res.Archives, name)
		pkgBin, err := writePlatformPackage(res.NPM, cfg.Version, p, bin, docs, src.Time)
		if err != nil {
			return nil, err
		}
		res.Binaries[p.String()] = pkgBin
	}
	if err := writeLauncherPackage(res.NPM, cfg.Version, cfg.Platforms, docs, src.Time); err != nil {
		return nil, err
	}
	slices.Sort(res.Archives)
	if res.Sums, err = checksums(cfg.Out, res.Archives); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(cfg.Out, "SHA256SUMS"), res.Sums, 0o644); err != nil {
		return nil, err
	}
	return res, nil
}

// git runs git in root and returns its output, trimmed.
func git(root string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}

// readSource reads the commit, its time and whether the tree is dirty.
func readSource(root string) (Source, error) {
	commit, err := git(root, "rev-parse", "HEAD")
	if err != nil {
		return Source{}, fmt.Errorf("a release is built from a git commit: %w", err)
	}
	ct, err := git(root, "show", "-s", "--format=%ct", "HEAD")
	if err != nil {
		return Source{}, err
	}
	secs, err := strconv.ParseInt(ct, 10, 64)
	if err != nil {
		return Source{}, fmt.Errorf("commit time %q: %w", ct, err)
	}
	status, err := git(root, "status", "--porcelain", "--untracked-files=no")
	if err != nil {
		return Source{}, err
	}
	return Source{Commit: commit, Time: time.Unix(secs, 0).UTC(), Dirty: status != ""}, nil
}

// checkTag refuses a tag v<version> that names another commit.
func checkTag(root, version, commit string) error {
	tagged, err := git(root, "rev-parse", "--verify", "--quiet", "refs/tags/v"+version+"^{commit}")
	if err == nil && tagged != "" && tagged != commit {
		return fmt.Errorf("tag v%s is commit %s, not HEAD (%s)", version, tagged[:12], commit[:12])
	}
	return nil
}

// LatestVersion returns the newest version with an entry in the
// CHANGELOG.md under root (the first "## [x.y.z]" heading; Unreleased is
// none).
func LatestVersion(root string) (string, error) {
	data, err := os.ReadFile(filepath.Join(root, "CHANGELOG.md"))
	if err != nil {
		return "", err
	}
	for _, m := range changelogHeading.FindAllSubmatch(data, -1) {
		if v := string(m[1]); isVersion(v) {
			return v, nil
		}
	}
	return "", ErrNoRelease
}

// ErrNoRelease is LatestVersion's error for a CHANGELOG.md with no
// released version yet (only Unreleased).
var ErrNoRelease = errors.New("CHANGELOG.md has no released version")

var changelogHeading = regexp.MustCompile(`(?m)^## \[([^\]]+)\]`)

// checkChangelog requires a "## [version]" entry (Keep a Changelog).
func checkChangelog(path, version string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("the release notes: %w", err)
	}
	heading := regexp.MustCompile(`(?m)^## \[` + regexp.QuoteMeta(version) + `\]`)
	if !heading.Match(data) {
		return fmt.Errorf("CHANGELOG.md has no entry \"## [%s]\": write the release notes first", version)
	}
	return nil
}

// prepareOut empties out, refusing a directory that is not an earlier
// release's (nothing else is ever deleted).
func prepareOut(out string) error {
	entries, err := os.ReadDir(out)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return os.MkdirAll(out, 0o755)
	case err != nil:
		return err
	case len(entries) == 0:
		return nil
	}
	if _, err := os.Stat(filepath.Join(out, "SHA256SUMS")); err != nil {
		return fmt.Errorf("%s is not empty and holds no earlier release (no SHA256SUMS): not replacing it", out)
	}
	if err := os.RemoveAll(out); err != nil {
		return err
	}
	return os.MkdirAll(out, 0o755)
}

// docs are the files every archive and npm package carries.
type docs struct{ license, readme, changelog []byte }

// readDocs reads them from the checkout at root; the README's links to
// other files of the repository lead to commit's copy of them.
func readDocs(root, commit string) (docs, error) {
	var d docs
	var err error
	for _, f := range []struct {
		name string
		dst  *[]byte
	}{{"LICENSE", &d.license}, {"README.md", &d.readme}, {"CHANGELOG.md", &d.changelog}} {
		if *f.dst, err = os.ReadFile(filepath.Join(root, f.name)); err != nil {
			return d, err
		}
	}
	d.readme = absoluteLinks(d.readme, commit)
	return d, nil
}

// buildBinary builds one platform's binary reproducibly and checks what
// its build info says.
func buildBinary(cfg Config, root string, src Source, p Platform, out string) error {
	ldflags := strings.Join([]string{
		"-s", "-w", "-buildid=",
		"-X", "main.releaseVersion=" + cfg.Version,
		"-X", "main.releaseCommit=" + src.Commit,
		"-X", "main.releaseDate=" + src.Time.Format(time.RFC3339),
	}, " ")
	if src.Dirty {
		ldflags += " -X main.releaseModified=true"
	}
	// -buildvcs=false: the go command stamps VCS data in a clone but not
	// in a git worktree, which would make the same commit two binaries;
	// the -X stamps carry the same facts from every checkout.
	cmd := exec.Command(cfg.Go, "build", "-trimpath", "-buildvcs=false", "-ldflags", ldflags, "-o", out, Command)
	cmd.Dir = root
	cmd.Env = append(os.Environ(),
		"GOOS="+p.OS, "GOARCH="+p.Arch, "CGO_ENABLED=0",
		"GOAMD64=v1", "GOARM64=v8.0", // the defaults, named: a user's setting must not change the bytes
		"GOFLAGS=-mod=readonly", // only these flags, whatever the user's go env says
		"GOTOOLCHAIN=local",     // the toolchain the release says it used, never a download
	)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("building %s: %v\n%s", p, err, stderr.String())
	}
	bi, err := buildinfo.ReadFile(out)
	if err != nil {
		return fmt.Errorf("%s: reading the build info back: %w", p, err)
	}
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	switch {
	case bi.Path != Module+"/cmd/"+Name:
		return fmt.Errorf("%s: built %s, not the command", p, bi.Path)
	case settings["GOOS"] != p.OS || settings["GOARCH"] != p.Arch || settings["CGO_ENABLED"] != "0" || settings["-trimpath"] != "true":
		return fmt.Errorf("%s: the build info says %v", p, settings)
	case settings["vcs.revision"] != "":
		return fmt.Errorf("%s: VCS data in the build info (-buildvcs was overridden)", p)
	}
	// -trimpath keeps -ldflags out of the build info: look for the stamps
	// themselves (a misspelt -X is silently ignored by the linker).
	bin, err := os.ReadFile(out)
	if err != nil {
		return err
	}
	if !bytes.Contains(bin, []byte(src.Commit)) || !bytes.Contains(bin, []byte(src.Time.Format(time.RFC3339))) {
		return fmt.Errorf("%s: the commit stamps (-X main.release*) are not in the binary", p)
	}
	return os.Chtimes(out, src.Time, src.Time)
}

// checksums returns SHA256SUMS for the archives (sha256sum -c reads it).
func checksums(dir string, names []string) ([]byte, error) {
	var b bytes.Buffer
	for _, n := range names {
		f, err := os.Open(filepath.Join(dir, n))
		if err != nil {
			return nil, err
		}
		h := sha256.New()
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(&b, "%s  %s\n", hex.EncodeToString(h.Sum(nil)), n)
	}
	return b.Bytes(), nil
}

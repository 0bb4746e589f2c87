package release

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

const repoRoot = "../.."

func runGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func hostPlatform(t *testing.T) Platform {
	t.Helper()
	p, ok := HostPlatform(runtime.GOOS, runtime.GOARCH)
	if !ok {
		t.Skipf("no release platform for %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	return p
}

// TestReproducible builds the release of this repository's HEAD for this
// machine's platform twice, from two checkouts at different paths, into
// two directories: SHA256SUMS and every archive are byte-identical
// (-trimpath, no VCS stamps of the go command, only the commit's time).
// The cross builds of the other platforms run in make cross; this one
// costs two links (the compiles are cached between them).
func TestReproducible(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	host := hostPlatform(t)
	var results []*Result
	var outs []string
	var version string
	for _, name := range []string{"one", "checkout-two"} {
		clone := filepath.Join(t.TempDir(), name)
		// No tags: a later release's tag must not make this commit's
		// build refuse the version.
		runGit(t, repoRoot, "clone", "--quiet", "--shared", "--no-tags", ".", clone)
		v, err := LatestVersion(clone) // the commit's own changelog
		trial := false
		switch {
		case errors.Is(err, ErrNoRelease):
			// Before the first release: a trial build of a version to
			// come (the clone is clean, so it is stamped as a release).
			v, trial = "0.0.0-test", true
		case err != nil:
			t.Fatal(err)
		}
		version = v
		out := filepath.Join(t.TempDir(), "dist")
		res, err := Build(Config{Root: clone, Version: version, Out: out, Platforms: []Platform{host}, AllowDirty: trial})
		if err != nil {
			t.Fatal(err)
		}
		results = append(results, res)
		outs = append(outs, out)
	}
	if !bytes.Equal(results[0].Sums, results[1].Sums) {
		t.Fatalf("two builds of one commit differ:\n%s\n%s", results[0].Sums, results[1].Sums)
	}
	for _, name := range results[0].Archives {
		a, _ := os.ReadFile(filepath.Join(outs[0], name))
		b, _ := os.ReadFile(filepath.Join(outs[1], name))
		if len(a) == 0 || !bytes.Equal(a, b) {
			t.Errorf("%s differs (%d and %d bytes)", name, len(a), len(b))
		}
	}
	res := results[0]
	checkArchive(t, filepath.Join(outs[0], res.Archives[0]), host, version, res.Source.Time)
	checkVersion(t, res.Binaries[host.String()], version, res.Source)
	checkPackages(t, res.NPM, version, []Platform{host})
}

// checkArchive: one directory named like the archive holding the binary,
// LICENSE, README.md and CHANGELOG.md; owner 0 and no names; the commit's
// time on every entry; the binary executable.
func checkArchive(t *testing.T, path string, p Platform, version string, mtime time.Time) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	if gz.Name != "" || !gz.ModTime.IsZero() {
		t.Errorf("gzip header names %q at %v", gz.Name, gz.ModTime)
	}
	tr := tar.NewReader(gz)
	dir := p.archiveName(version)
	var names []string
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
		if h.Uid != 0 || h.Gid != 0 || h.Uname != "" || h.Gname != "" || !h.ModTime.Equal(mtime) {
			t.Errorf("%s: owner %d/%d %q/%q, time %v (want the commit's, %v)", h.Name, h.Uid, h.Gid, h.Uname, h.Gname, h.ModTime, mtime)
		}
		if h.Name == dir+"/"+p.exe() && h.Mode != 0o755 {
			t.Errorf("binary mode %o", h.Mode)
		}
	}
	want := []string{dir + "/", dir + "/" + p.exe(), dir + "/LICENSE", dir + "/README.md", dir + "/CHANGELOG.md"}
	if !slices.Equal(names, want) {
		t.Errorf("entries %q, want %q", names, want)
	}
}

// checkVersion runs the released binary: it says the release's version,
// its commit and the commit's time, nothing else (rule M).
func checkVersion(t *testing.T, bin, version string, src Source) {
	t.Helper()
	out, err := exec.Command(bin, "version", "--json").Output()
	if err != nil {
		t.Fatalf("%s version --json: %v", bin, err)
	}
	var got struct {
		Version, Commit, Date string
		Modified              bool
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	if got.Version != version || got.Commit != src.Commit || got.Date != src.Time.Format(time.RFC3339) || got.Modified {
		t.Errorf("version --json says %s; want %s, commit %s, date %s", out, version, src.Commit, src.Time.Format(time.RFC3339))
	}
	line, err := exec.Command(bin, "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	if want := "acp-normalize " + version + " (commit " + src.Commit[:12] + ", " + src.Time.Format(time.RFC3339) + ", go"; !strings.HasPrefix(string(line), want) {
		t.Errorf("--version says %q, want %q...", line, want)
	}
}

// checkPackages: the launcher's optionalDependencies are exactly the
// platform packages at the release's version; each platform package says
// its os and cpu and carries the binary.
func checkPackages(t *testing.T, npm, version string, platforms []Platform) {
	t.Helper()
	var launcher packageJSON
	readJSON(t, filepath.Join(npm, Name, "package.json"), &launcher)
	want := map[string]string{}
	for _, p := range platforms {
		want[PlatformPackage(p)] = version
		var pj packageJSON
		readJSON(t, filepath.Join(npm, PlatformPackage(p), "package.json"), &pj)
		if pj.Version != version || !slices.Equal(pj.OS, []string{p.npmOS()}) || !slices.Equal(pj.CPU, []string{p.npmCPU()}) {
			t.Errorf("%s: version %s, os %v, cpu %v", pj.Name, pj.Version, pj.OS, pj.CPU)
		}
		if st, err := os.Stat(filepath.Join(npm, PlatformPackage(p), "bin", p.exe())); err != nil || st.Mode().Perm() != 0o755 {
			t.Errorf("%s: binary %v (%v)", pj.Name, st, err)
		}
	}
	if launcher.Version != version || launcher.Bin[Name] != "bin/"+Name+".js" || len(launcher.OptionalDependencies) != len(want) {
		t.Errorf("launcher package %+v", launcher)
	}
	for name, v := range want {
		if launcher.OptionalDependencies[name] != v {
			t.Errorf("launcher optionalDependencies %v, want %v", launcher.OptionalDependencies, want)
		}
	}
	if st, err := os.Stat(filepath.Join(npm, Name, "bin", Name+".js")); err != nil || st.Mode().Perm() != 0o755 {
		t.Errorf("launcher script %v (%v)", st, err)
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// TestArchivesDeterministic: the same files give the same archive bytes,
// whatever the time of writing; zip entries carry the commit's time and
// the modes.
func TestArchivesDeterministic(t *testing.T) {
	mtime := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	d := docs{license: []byte("license"), readme: []byte("readme"), changelog: []byte("changes")}
	for _, p := range []Platform{{"linux", "arm64"}, {"windows", "amd64"}} {
		entries := archiveEntries(p, []byte("binary"), d)
		var a, b bytes.Buffer
		write := writeTarGz
		if p.OS == "windows" {
			write = writeZip
		}
		if err := write(&a, "dir", entries, mtime); err != nil {
			t.Fatal(err)
		}
		if err := write(&b, "dir", entries, mtime); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a.Bytes(), b.Bytes()) {
			t.Errorf("%s: two writes differ", p)
		}
		if p.OS != "windows" {
			continue
		}
		zr, err := zip.NewReader(bytes.NewReader(a.Bytes()), int64(a.Len()))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range zr.File {
			if !f.Modified.Equal(mtime) {
				t.Errorf("%s: time %v", f.Name, f.Modified)
			}
			if f.Name == "dir/acp-normalize.exe" && f.Mode().Perm() != 0o755 {
				t.Errorf("%s: mode %v", f.Name, f.Mode())
			}
		}
		if len(zr.File) != 4 {
			t.Errorf("%d files", len(zr.File))
		}
	}
}

// TestRefusals: what a release refuses before building anything.
func TestRefusals(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	repo := t.TempDir()
	runGit(t, repo, "init", "--quiet")
	for name, body := range map[string]string{"LICENSE": "l", "README.md": "r", "CHANGELOG.md": "# Changelog\n\n## [Unreleased]\n\n## [1.2.0] - 2026-12-01\n"} {
		if err := os.WriteFile(filepath.Join(repo, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	runGit(t, repo, "add", ".")
	runGit(t, repo, "commit", "--quiet", "-m", "one")
	runGit(t, repo, "tag", "v1.1.0")
	runGit(t, repo, "commit", "--quiet", "--allow-empty", "-m", "two")
	if v, err := LatestVersion(repo); err != nil || v != "1.2.0" {
		t.Errorf("LatestVersion = %q, %v", v, err)
	}
	notEmpty := t.TempDir()
	if err := os.WriteFile(filepath.Join(notEmpty, "precious"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	linux := []Platform{{"linux", "amd64"}}
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"leading v", Config{Version: "v1.2.0"}, "not x.y.z"},
		{"not semver", Config{Version: "1.2"}, "not x.y.z"},
		{"no changelog entry", Config{Version: "1.3.0"}, `CHANGELOG.md has no entry "## [1.3.0]"`},
		{"tag elsewhere", Config{Version: "1.1.0"}, "tag v1.1.0 is commit"},
		{"out holds something else", Config{Version: "1.2.0", Out: notEmpty}, "holds no earlier release"},
		{"no platforms", Config{Version: "1.2.0", Platforms: []Platform{}}, "no platforms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg
			cfg.Root = repo
			if cfg.Out == "" {
				cfg.Out = filepath.Join(t.TempDir(), "dist")
			}
			if cfg.Platforms == nil {
				cfg.Platforms = linux
			}
			_, err := Build(cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err %v, want %q", err, tt.want)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(notEmpty, "precious")); err != nil {
		t.Errorf("a directory that held no release was touched: %v", err)
	}
	// Uncommitted changes are refused unless allowed.
	if err := os.WriteFile(filepath.Join(repo, "README.md"), []byte("changed"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Build(Config{Root: repo, Version: "1.2.0", Out: filepath.Join(t.TempDir(), "d"), Platforms: linux}); err == nil || !strings.Contains(err.Error(), "uncommitted changes") {
		t.Errorf("dirty tree: %v", err)
	}
}

func TestParsePlatform(t *testing.T) {
	for _, s := range []string{"linux/amd64", "darwin/arm64", "windows/arm64"} {
		if p, err := ParsePlatform(s); err != nil || p.String() != s {
			t.Errorf("%s: %v %v", s, p, err)
		}
	}
	for _, s := range []string{"linux", "plan9/amd64", "linux/386", ""} {
		if _, err := ParsePlatform(s); err == nil {
			t.Errorf("%q accepted", s)
		}
	}
	if got := PlatformPackage(Platform{"windows", "amd64"}); got != "acp-normalize-win32-x64" {
		t.Errorf("windows package %s (npm's os is win32, cpu x64)", got)
	}
}

// TestNPMJSONAsWritten: a package.json reads as npm writes one, ">=16"
// and not encoding/json's HTML-safe "\u003e=16" (the launcher's engines
// field), two-space indented, one newline at the end.
func TestNPMJSONAsWritten(t *testing.T) {
	dir := t.TempDir()
	pj := map[string]any{"engines": map[string]string{"node": ">=16"}, "description": "a <proxy> & more"}
	if err := writeFiles(dir, []npmFile{{name: "package.json", mode: 0o644, json: pj}}, time.Unix(0, 0)); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"description\": \"a <proxy> & more\",\n  \"engines\": {\n    \"node\": \">=16\"\n  }\n}\n"
	if string(got) != want {
		t.Errorf("package.json:\n%s\nwant:\n%s", got, want)
	}
}

// TestLatestVersionNoRelease: a changelog with only Unreleased notes has no
// released version (ErrNoRelease), as before the first release.
func TestLatestVersionNoRelease(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "CHANGELOG.md"), []byte("# Changelog\n\n## [Unreleased]\n\n- a change\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if v, err := LatestVersion(dir); !errors.Is(err, ErrNoRelease) {
		t.Errorf("LatestVersion = %q, %v; want ErrNoRelease", v, err)
	}
}

func TestIsVersion(t *testing.T) {
	tests := []struct {
		v    string
		want bool
	}{
		{"1.2.0", true},
		{"0.1.0-rc.1", true},
		{"10.20.30-alpha-1.x", true},
		{"v1.2.0", false},   // the leading v is the tag's, not the version's
		{"1.2", false},      // x/mod's shorthand is no release version
		{"1.2.0+b1", false}, // build metadata
		{"01.2.0", false},
		{"1.2.0-rc.01", false}, // a numeric pre-release part with a leading zero
		{"Unreleased", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := isVersion(tt.v); got != tt.want {
			t.Errorf("isVersion(%q) = %v, want %v", tt.v, got, tt.want)
		}
	}
}

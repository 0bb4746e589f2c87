package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// binaryVersion is the version a built acp-normalize reports.
func binaryVersion(t testing.TB, bin string) string {
	t.Helper()
	out, err := exec.Command(bin, "version", "--json").Output()
	if err != nil {
		t.Fatalf("%s version --json: %v", bin, err)
	}
	var b buildInfo
	if err := json.Unmarshal(out, &b); err != nil || b.Version == "" {
		t.Fatalf("%s version --json: %q (%v)", bin, out, err)
	}
	return b.Version
}

func TestPseudoVersionCommit(t *testing.T) {
	tests := []struct{ version, commit string }{
		{"0.0.0-20261201205042-cd1927fdb803", "cd1927fdb803"},
		{"0.0.0-20261201205042-cd1927fdb803+dirty", "cd1927fdb803"},
		{"0.1.1-0.20261201205042-cd1927fdb803", "cd1927fdb803"},
		{"0.1.0", ""},
		{"0.1.0-rc.1", ""},
		{"0.0.0-devel", ""},
		{"0.0.0-2026120120504-cd1927fdb803", ""}, // 13 digits: no time
	}
	for _, tt := range tests {
		if got := pseudoVersionCommit(tt.version); got != tt.commit {
			t.Errorf("pseudoVersionCommit(%q) = %q, want %q", tt.version, got, tt.commit)
		}
	}
}

func TestBuildInfoLine(t *testing.T) {
	tests := []struct {
		b    buildInfo
		want string
	}{
		{buildInfo{Version: "0.1.0", Commit: "cd1927fdb8033758752df89553a887dcf39ab35e", Date: "2026-12-01T20:50:42Z", Go: "go1.26.8", Platform: "linux/amd64"},
			"acp-normalize 0.1.0 (commit cd1927fdb803, 2026-12-01T20:50:42Z, go1.26.8 linux/amd64)"},
		{buildInfo{Version: "0.0.0-20261201205042-cd1927fdb803+dirty", Commit: "cd1927fdb803", Modified: true, Go: "go1.26.8", Platform: "darwin/arm64"},
			"acp-normalize 0.0.0-20261201205042-cd1927fdb803+dirty (commit cd1927fdb803 with uncommitted changes, go1.26.8 darwin/arm64)"},
		{buildInfo{Version: develVersion, Go: "go1.26.8", Platform: "windows/amd64"},
			"acp-normalize 0.0.0-devel (commit unknown, go1.26.8 windows/amd64)"},
	}
	for _, tt := range tests {
		if got := tt.b.String(); got != tt.want {
			t.Errorf("got  %s\nwant %s", got, tt.want)
		}
	}
}

// TestVersionFromBuildInfo builds the command in a clone of this
// repository with the go command's VCS stamps, as `go build` or `go
// install` in a clone does: the version, commit and date it prints come
// from the build info (no hand-kept constant), and the
// initialize advertisement says the same version (rule M). Built with
// CGO off and -trimpath, as make cross builds: only the link is new.
func TestVersionFromBuildInfo(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	clone := filepath.Join(t.TempDir(), "clone")
	if out, err := exec.Command("git", "clone", "--quiet", "--shared", "--no-tags", "../..", clone).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	gitOut := func(args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir = clone
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(out))
	}
	commit := gitOut("rev-parse", "HEAD")
	date := gitOut("show", "-s", "--format=%cd", "--date=format-local:%Y-%m-%dT%H:%M:%SZ", "HEAD")
	bin := filepath.Join(t.TempDir(), "acp-normalize")
	build := exec.Command("go", "build", "-trimpath", "-buildvcs=true", "-o", bin, "./cmd/acp-normalize")
	build.Dir = clone
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "TZ=UTC", "GOFLAGS=-mod=readonly")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "version", "--json").Output()
	if err != nil {
		t.Fatal(err)
	}
	var got buildInfo
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(got.Version, "0.0.0-") || !strings.HasSuffix(got.Version, commit[:12]) ||
		got.Commit != commit || got.Date != date || got.Modified {
		t.Errorf("version --json says %s; want a pseudo-version of commit %s, its date %s", out, commit, date)
	}
	// Rule M: the initialize advertisement is that version.
	capture := filepath.Join("..", "..", "testdata", "captures", "qwen", "foreground.jsonl")
	probe, err := exec.Command(bin, "probe", "--json", "--", bin, "mock-agent", capture).Output()
	if err != nil {
		t.Fatalf("probe: %v\n%s", err, probe)
	}
	var rep struct {
		Advertised struct {
			Version string `json:"version"`
		} `json:"advertised"`
	}
	if err := json.Unmarshal(probe, &rep); err != nil || rep.Advertised.Version != got.Version {
		t.Errorf("advertised version %q, --version says %q (%v)", rep.Advertised.Version, got.Version, err)
	}
}

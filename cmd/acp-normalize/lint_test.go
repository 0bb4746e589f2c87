package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestLintCatchesFatalOffTheTestGoroutine: CI runs staticcheck and fails
// on a finding, so a t.Fatalf called off the test goroutine (SA2002: it
// ends only that goroutine, and the test goes on) cannot come back. The
// chain, checked link by link: .ci/run runs `make test`, `make test`
// runs lint first, and lint runs staticcheck at the pinned version with
// no way around it; then that exact command, with the repository's
// staticcheck.conf, over a package with the bug, must report SA2002 and
// exit non-zero.
func TestLintCatchesFatalOffTheTestGoroutine(t *testing.T) {
	t.Parallel()
	ci, err := os.ReadFile(filepath.Join(repoRoot, ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^make test$`).Match(ci) {
		t.Error(".ci/run does not run make test")
	}
	makefile, err := os.ReadFile(filepath.Join(repoRoot, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	if m := regexp.MustCompile(`(?m)^test:(.*)$`).FindSubmatch(makefile); m == nil || !strings.Contains(" "+string(m[1])+" ", " lint ") {
		t.Error("make test does not depend on lint")
	}
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make: the lint command is not run")
	}
	dry, err := exec.Command("make", "-s", "-n", "-C", repoRoot, "lint").Output()
	if err != nil {
		t.Fatalf("make -n lint: %v", err)
	}
	var staticcheck string
	for _, line := range strings.Split(string(dry), "\n") {
		if strings.Contains(line, "staticcheck") {
			staticcheck = strings.TrimSpace(line)
		}
	}
	pinned := regexp.MustCompile(`^go run honnef\.co/go/tools/cmd/staticcheck@v\d+\.\d+\.\d+ \./\.\.\.$`)
	if !pinned.MatchString(staticcheck) {
		t.Fatalf("make lint runs %q, want go run honnef.co/go/tools/cmd/staticcheck@vX.Y.Z ./... (pinned, unconditional)", staticcheck)
	}

	dir := t.TempDir()
	conf, err := os.ReadFile(filepath.Join(repoRoot, "staticcheck.conf"))
	if err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{
		"go.mod":           "module lintfixture\n\ngo 1.26\n",
		"staticcheck.conf": string(conf),
		"fixture_test.go": `package lintfixture

import "testing"

func TestOffGoroutine(t *testing.T) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		t.Fatalf("ends only this goroutine")
	}()
	<-done
}
`,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	args := strings.Fields(staticcheck)
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "SA2002") {
		if strings.Contains(string(out), "dial tcp") || strings.Contains(string(out), "GOPROXY=off") {
			t.Skipf("staticcheck cannot be fetched here (make lint could not run either): %s", out)
		}
		t.Errorf("%s over a t.Fatalf off the test goroutine: %v, want SA2002 and a failure:\n%s", staticcheck, err, out)
	}
}

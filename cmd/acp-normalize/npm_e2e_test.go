//go:build unix

package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/acp-normalize/acp-normalize/internal/release"
)

// npmInstall is the release's npm packages for this platform, installed
// from their packed tarballs into a scratch prefix without network.
type npmInstall struct {
	prefix   string // holds node_modules
	launcher string // node_modules/.bin/acp-normalize
	bin      string // the released binary itself
	npm      string // the release's npm package directories
}

// installNPM builds a trial release of this tree for this platform, packs
// the launcher and the platform package with npm, and installs both
// tarballs into a fresh prefix with --offline, as on a machine that has
// only npm.
func installNPM(t *testing.T) npmInstall {
	t.Helper()
	for _, tool := range []string{"npm", "npx", "node"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not found: the npm package test is skipped", tool)
		}
	}
	host, ok := release.HostPlatform(runtime.GOOS, runtime.GOARCH)
	if !ok {
		t.Skipf("the release has no %s/%s package", runtime.GOOS, runtime.GOARCH)
	}
	dist := filepath.Join(t.TempDir(), "dist")
	res, err := release.Build(release.Config{Root: "../..", Version: "0.0.0-test", Out: dist,
		Platforms: []release.Platform{host}, AllowDirty: true})
	if err != nil {
		t.Fatal(err)
	}
	packs := t.TempDir()
	var tarballs []string
	for _, dir := range release.Packages(res.NPM, []release.Platform{host}) {
		out := npm(t, packs, "pack", dir, "--pack-destination", packs, "--silent")
		tarballs = append(tarballs, filepath.Join(packs, strings.TrimSpace(out)))
	}
	prefix := t.TempDir()
	if err := os.WriteFile(filepath.Join(prefix, "package.json"), []byte(`{"name":"scratch","private":true}`), 0o644); err != nil {
		t.Fatal(err)
	}
	npm(t, prefix, append([]string{"install", "--offline", "--no-audit", "--no-fund", "--loglevel=error"}, tarballs...)...)
	return npmInstall{prefix: prefix, launcher: filepath.Join(prefix, "node_modules", ".bin", "acp-normalize"),
		bin: res.Binaries[host.String()], npm: res.NPM}
}

func npm(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("npm", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "npm_config_update_notifier=false")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("npm %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out)
}

// npx runs `npx --offline acp-normalize ARGS` in the prefix, as an
// editor's config does.
func (n npmInstall) npx(args ...string) *exec.Cmd {
	cmd := exec.Command("npx", append([]string{"--offline", "-y", "acp-normalize"}, args...)...)
	cmd.Dir = n.prefix
	cmd.Env = append(os.Environ(), "NO_COLOR=1", "npm_config_update_notifier=false")
	return cmd
}

// TestNPMPackage installs the packed npm release with no network and runs
// it as users do: npx acp-normalize --version, a replay (stdout is the
// binary's own, byte for byte) and a session with the mock agent through
// the launcher (what `npx -y acp-normalize -- AGENT` in an editor's config
// runs); then the launcher's process contract: the binary's exit code,
// signals passed on, and nothing left running when the launcher is
// SIGKILLed or orphaned (F5).
func TestNPMPackage(t *testing.T) {
	t.Parallel()
	n := installNPM(t)
	capture, err := filepath.Abs(filepath.Join("..", "..", "testdata", "captures", "cursor", "subagent-foreground.jsonl"))
	if err != nil {
		t.Fatal(err)
	}

	t.Run("npx --version", func(t *testing.T) {
		t.Parallel()
		got, err := n.npx("--version").Output()
		if err != nil {
			t.Fatal(err)
		}
		want, _ := exec.Command(n.bin, "--version").Output()
		if !bytes.HasPrefix(got, []byte("acp-normalize 0.0.0-test (commit ")) || !bytes.Equal(got, want) {
			t.Errorf("npx acp-normalize --version: %q, the binary says %q", got, want)
		}
	})

	t.Run("replay byte for byte", func(t *testing.T) {
		t.Parallel()
		got, err := n.npx("replay", capture).Output()
		if err != nil {
			t.Fatal(err)
		}
		want, err := exec.Command(n.bin, "replay", capture).Output()
		if err != nil || len(want) == 0 || !bytes.Equal(got, want) {
			t.Errorf("npx replay wrote %d bytes, the binary %d (%v): stdout is not passed through untouched", len(got), len(want), err)
		}
	})

	t.Run("session through npx", func(t *testing.T) {
		t.Parallel()
		rec := filepath.Join(t.TempDir(), "live.jsonl")
		// The agent is the launcher again (npx puts node_modules/.bin
		// on PATH): a nested launcher, watching its own parent.
		c := startLiveCmd(t, n.npx("--record", rec, "--record-raw", "--", "acp-normalize", "mock-agent", "--no-stderr", capture), nil)
		playClient(t, c, capture)
		live := c.finish(true)
		if code := c.cmd.ProcessState.ExitCode(); code != 0 || c.err.String() != "" {
			t.Errorf("exit %d, stderr %q (the default level puts nothing on stderr)", code, c.err.String())
		}
		sameStream(t, live, replayedToClientBy(t, n.bin, rec), rec)
	})

	t.Run("platform package missing", func(t *testing.T) {
		t.Parallel()
		// The launcher alone, as after npm install --omit=optional.
		alone := filepath.Join(t.TempDir(), "node_modules", "acp-normalize")
		if err := os.CopyFS(alone, os.DirFS(filepath.Join(n.npm, "acp-normalize"))); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("node", filepath.Join(alone, "bin", "acp-normalize.js"), "--version")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 || stdout.Len() != 0 || strings.Count(stderr.String(), "\n") != 1 ||
			!strings.Contains(stderr.String(), "that carries the binary is not installed") {
			t.Errorf("exit %v, stdout %q, stderr %q; want exit 1 and one line", err, stdout.String(), stderr.String())
		}
	})

	t.Run("exit codes", func(t *testing.T) {
		t.Parallel()
		for _, tt := range []struct {
			script string
			code   int
		}{{"exit 3", 3}, {"kill -TERM $$", 128 + 15}} {
			err := exec.Command(n.launcher, "--", "sh", "-c", tt.script).Run()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != tt.code {
				t.Errorf("agent %q: launcher ended %v, want exit %d", tt.script, err, tt.code)
			}
		}
	})

	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// startTree starts `launcher -- fake agent` (through sh when viaShell,
	// which is then the launcher's parent) with the client's stdin held
	// open, and returns the command, the pids of the agent and its
	// grandchild, and the pid of the proxy.
	startTree := func(t *testing.T, viaShell bool) (*exec.Cmd, []int, int) {
		pidfile := filepath.Join(t.TempDir(), "pids")
		env := append(os.Environ(), envFakeAgent+"="+script(t, "spawn "+pidfile, "sleep 60s"))
		argv := []string{n.launcher, "--kill-grace", "500ms", "--", self, "-test.run=^$"}
		var cmd *exec.Cmd
		if viaShell {
			// A background job's stdin is /dev/null, assigned before
			// its own redirections (POSIX, dash): `<&0` would copy
			// /dev/null, whose EOF ends the session by itself (rule
			// F5's client EOF), and the orphan watch would go
			// untested. The editor's stdin goes through fd 9.
			cmd = exec.Command("sh", "-c", `exec 9<&0; "$@" <&9 9<&- & wait`, "sh")
			cmd.Args = append(cmd.Args, argv...)
		} else {
			cmd = exec.Command(argv[0], argv[1:]...)
		}
		cmd.Env = env
		// The editor's end of stdin stays open until the test ends
		// (exec.Cmd's StdinPipe would be closed by Wait).
		stdinR, stdinW, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { stdinW.Close() })
		cmd.Stdin = stdinR
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		stdinR.Close()
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		pids := readPids(t, pidfile)
		proxyPid := ancestor(t, pids[0], 2) // the agent's parent is the subreaper, its parent the proxy
		return cmd, pids, proxyPid
	}

	t.Run("SIGTERM passed on", func(t *testing.T) {
		t.Parallel()
		cmd, pids, proxyPid := startTree(t, false)
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		err := cmd.Wait()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 128+15 {
			t.Errorf("launcher ended %v, want exit 143 (the agent's SIGTERM, F6)", err)
		}
		waitGone(t, append(pids, proxyPid))
	})

	t.Run("SIGKILL of the launcher", func(t *testing.T) {
		t.Parallel()
		cmd, pids, proxyPid := startTree(t, false)
		if err := cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		_ = cmd.Wait()
		// The editor's pipes stay open: only the launcher's socket tells
		// the binary.
		waitGone(t, append(pids, proxyPid))
	})

	t.Run("launcher orphaned", func(t *testing.T) {
		t.Parallel()
		cmd, pids, proxyPid := startTree(t, true)
		launcherPid := ancestor(t, proxyPid, 1)
		if err := cmd.Process.Kill(); err != nil { // npx (here sh) dies, the launcher lives on
			t.Fatal(err)
		}
		_ = cmd.Wait()
		waitGone(t, append(pids, proxyPid, launcherPid))
	})
}

// ancestor returns the pid n generations above pid (Linux /proc; the test
// skips elsewhere).
func ancestor(t *testing.T, pid, n int) int {
	t.Helper()
	for range n {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			t.Skipf("no /proc here: %v", err)
		}
		// pid (comm) state ppid ...: comm may hold spaces and parens.
		s := string(data)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if pid, err = strconv.Atoi(fields[1]); err != nil {
			t.Fatal(err)
		}
	}
	return pid
}

package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"
)

// procStatusKiB reads a "VmRSS:"-style field of /proc/PID/status, in KiB.
func procStatusKiB(t *testing.T, pid int, field string) int64 {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}

// TestE2EP6HeldMemoryWithinTwiceTheBudget: what the modules hold is
// capped by the connection's byte budget (P6, 64 MiB), and so is what the
// proxy takes from the system for it: peak RSS stays within twice the
// budget. The agent sends cursor/task requests with 1 MiB
// prompts whose tool calls never come: the Cursor module holds each (C4)
// until the budget makes it drop the oldest.
func TestE2EP6HeldMemoryWithinTwiceTheBudget(t *testing.T) {
	const tasks, prompt = 256, 1 << 20
	const budget = 64 << 20
	// The proxy's own limit, not one from the environment.
	s := start(t, script(t, fmt.Sprintf("cursortasks %d %d", tasks, prompt)), nil, "GOMEMLIMIT=")
	hang := time.AfterFunc(2*time.Minute, func() { _ = s.cmd.Process.Kill() })
	defer hang.Stop()
	for {
		if line := s.readLine(); strings.Contains(line, `"text":"held"`) {
			break
		}
	}
	peak := procStatusKiB(t, s.cmd.Process.Pid, "VmHWM") << 10
	rss := procStatusKiB(t, s.cmd.Process.Pid, "VmRSS") << 10
	t.Logf("%d cursor/task of %d bytes held: peak RSS %.1f MiB, RSS %.1f MiB (budget %d MiB)",
		tasks, prompt, float64(peak)/(1<<20), float64(rss)/(1<<20), budget>>20)
	s.stdin.Close()
	s.readAll()
	s.wait(time.Minute)
	if peak > 2*budget {
		t.Errorf("peak RSS %.1f MiB is more than twice the %d MiB budget", float64(peak)/(1<<20), budget>>20)
	}
}

// TestLimitMemoryKeepsGOMEMLIMIT: a limit the user set wins (P6).
func TestLimitMemoryKeepsGOMEMLIMIT(t *testing.T) {
	prev := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(prev)
	debug.SetMemoryLimit(1 << 40)
	limitMemory(64<<20, func(k string) string { return map[string]string{"GOMEMLIMIT": "1GiB"}[k] })
	if got := debug.SetMemoryLimit(-1); got != 1<<40 {
		t.Fatalf("limit %d with GOMEMLIMIT set", got)
	}
	limitMemory(64<<20, func(string) string { return "" })
	if got := debug.SetMemoryLimit(-1); got != memoryLimitFor(64<<20) || got != 104<<20 {
		t.Fatalf("limit %d, want %d", got, 104<<20)
	}
}

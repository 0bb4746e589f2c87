//go:build linux

package proxy

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestParseSubreaperSpec(t *testing.T) {
	tests := []struct {
		name   string
		spec   string
		parent int
		grace  time.Duration
		ok     bool
	}{
		{"pid and grace", "123 3000000000", 123, 3 * time.Second, true},
		{"missing grace", "123", 0, 0, false},
		{"zero grace", "123 0", 0, 0, false},
		{"not numbers", "x y", 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parent, grace, err := parseSubreaperSpec(tt.spec)
			if (err == nil) != tt.ok || parent != tt.parent || grace != tt.grace {
				t.Fatalf("parseSubreaperSpec(%q) = %d, %v, %v", tt.spec, parent, grace, err)
			}
		})
	}
}

// F4: why an agent cannot be run is said in words a user can act on.
func TestDescribeExecError(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name, path, want string
	}{
		{"missing interpreter", write("bad", "#!/nonexistent\n"), "its interpreter (the #! line) was not found"},
		{"empty file", write("empty", ""), "not a program the system can run"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := forkAgent([]string{tt.path})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("forkAgent(%s) = %v, want %q", tt.path, err, tt.want)
			}
		})
	}
}

// F5: descendants finds a child and a grandchild, from /proc.
func TestDescendants(t *testing.T) {
	child := exec.Command("sh", "-c", "sleep 30 & echo started; wait")
	child.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = syscall.Kill(-child.Process.Pid, syscall.SIGKILL)
		for _, p := range descendants(child.Process.Pid) {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
		_ = child.Wait()
	}()
	buf := make([]byte, 8)
	if _, err := out.Read(buf); err != nil { // "started": the grandchild exists
		t.Fatal(err)
	}
	all := descendants(os.Getpid())
	if !slices.Contains(all, child.Process.Pid) {
		t.Fatalf("descendants(self) = %v lacks the child %d", all, child.Process.Pid)
	}
	if below := descendants(child.Process.Pid); len(below) != 1 {
		t.Fatalf("descendants(child) = %v, want the one grandchild", below)
	}
}

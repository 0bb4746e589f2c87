package benchharness

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"syscall"
)

// maxRSSBytes: Linux reports ru_maxrss in KiB.
func maxRSSBytes(ru *syscall.Rusage) int64 { return ru.Maxrss << 10 }

// peakRSS returns the process's own peak RSS (VmHWM, in bytes), 0 when
// unknown. Unlike ru_maxrss it does not start from the parent's RSS at
// fork, so a relay smaller than the harness is measured as it is.
func peakRSS(pid int) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	_, rest, ok := bytes.Cut(data, []byte("VmHWM:"))
	if !ok {
		return 0
	}
	line, _, _ := bytes.Cut(rest, []byte("\n"))
	kb, err := strconv.ParseInt(string(bytes.TrimSpace(bytes.TrimSuffix(bytes.TrimSpace(line), []byte("kB")))), 10, 64)
	if err != nil {
		return 0
	}
	return kb << 10
}

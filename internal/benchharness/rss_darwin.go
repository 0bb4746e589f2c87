package benchharness

import "syscall"

// maxRSSBytes: macOS reports ru_maxrss in bytes.
func maxRSSBytes(ru *syscall.Rusage) int64 { return ru.Maxrss }

// peakRSS is unknown on macOS (no /proc): ru_maxrss stands.
func peakRSS(int) int64 { return 0 }

package benchharness

import "syscall"

// maxRSSBytes: macOS reports ru_maxrss in bytes.
func maxRSSBytes(ru *syscall.Rusage) int64 { return ru.Maxrss }

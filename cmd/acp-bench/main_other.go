//go:build !(linux || darwin)

package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "acp-bench runs on Linux and macOS only (it reads rusage of cat pipelines)")
	os.Exit(1)
}

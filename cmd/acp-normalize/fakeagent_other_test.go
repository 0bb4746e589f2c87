//go:build !unix

package main

import (
	"fmt"
	"os"
)

// fakeAgent needs Unix signals; the end-to-end tests that use it are
// Unix-only.
func fakeAgent(string) int {
	fmt.Fprintln(os.Stderr, "fake agent: Unix only")
	return 99
}

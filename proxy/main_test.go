package proxy

import (
	"os"
	"testing"
)

// TestMain lets Run re-execute this test binary as the subreaper (Linux).
func TestMain(m *testing.M) {
	if code, ok := SubreaperMain(); ok {
		os.Exit(code)
	}
	os.Exit(m.Run())
}

package main

import (
	"os"
	"testing"
)

// envRunMain makes the test binary run the command itself, so that tests
// can start it as a process (the mock agent behind a proxy, say).
const envRunMain = "ACP_NORMALIZE_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(envRunMain) == "1" {
		os.Exit(run(os.Args, os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

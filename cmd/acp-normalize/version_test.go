package main

import (
	"encoding/json"
	"os/exec"
	"testing"
)

// binaryVersion is the version a built acp-normalize reports.
func binaryVersion(t testing.TB, bin string) string {
	t.Helper()
	out, err := exec.Command(bin, "version", "--json").Output()
	if err != nil {
		t.Fatalf("%s version --json: %v", bin, err)
	}
	var b buildInfo
	if err := json.Unmarshal(out, &b); err != nil || b.Version == "" {
		t.Fatalf("%s version --json: %q (%v)", bin, out, err)
	}
	return b.Version
}

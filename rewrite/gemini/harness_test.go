package gemini_test

import (
	"testing"

	"github.com/acp-normalize/acp-normalize/proxy/proxytest"
)

// withoutSnapshot removes the snapshot the module adds to a launch-call
// frame (and a _meta it left empty), for comparing the rest.
func withoutSnapshot(t testing.TB, frame []byte) []byte {
	t.Helper()
	return proxytest.WithoutMeta(t, frame, "params", "update")
}

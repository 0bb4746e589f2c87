package gemini_test

import (
	"testing"

	"github.com/acp-normalize/acp-normalize/proxy/proxytest"
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/rewrite/gemini"
)

// module is the module under test, configured with settings
// ("name=value" or a bool option's name).
func module(t testing.TB, settings ...string) rewrite.Module {
	return proxytest.Configured(t, gemini.Module(), settings...)
}

// withoutSnapshot removes the snapshot the module adds to a launch-call
// frame (and a _meta it left empty), for comparing the rest.
func withoutSnapshot(t testing.TB, frame []byte) []byte {
	t.Helper()
	return proxytest.WithoutMeta(t, frame, "params", "update")
}

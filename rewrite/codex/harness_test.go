package codex_test

import (
	"strings"
	"testing"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
	"github.com/acp-normalize/acp-normalize/proxy/proxytest"
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/rewrite/codex"
)

// module is the module under test, configured with settings
// ("name=value" or a bool option's name).
func module(t testing.TB, settings ...string) rewrite.Module {
	return proxytest.Configured(t, codex.Module(), settings...)
}

// withoutAdditions removes what the module may add to a launch-call frame
// (the snapshot and the V3 title) from both frames, for comparing the rest.
func withoutAdditions(t testing.TB, frame []byte) []byte {
	t.Helper()
	out := proxytest.WithoutMeta(t, frame, "params", "update")
	var err error
	if title, ok := rawjson.LookupString(out, "params", "update", "title"); ok && strings.HasPrefix(title, "Subagent: ") {
		if out, err = rawjson.Set(out, []byte(`"spawnAgent"`), "params", "update", "title"); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

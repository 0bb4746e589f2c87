package codex_test

import (
	"strings"
	"testing"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
	"github.com/acp-normalize/acp-normalize/proxy/proxytest"
)

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

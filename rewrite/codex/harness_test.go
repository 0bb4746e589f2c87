package codex_test

import (
	"strings"
	"testing"

	"github.com/acp-normalize/acp-normalize/proxy/proxytest"
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/rewrite/codex"
	"github.com/acp-normalize/acp-normalize/rewrite/meta"
	"github.com/acp-normalize/acp-normalize/rewrite/rawjson"
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
	out, err := rawjson.Delete(frame, "params", "update", "_meta", meta.Key)
	if err != nil {
		t.Fatal(err)
	}
	if m, ok := rawjson.Lookup(out, "params", "update", "_meta"); ok && string(m) == "{}" {
		if out, err = rawjson.Delete(out, "params", "update", "_meta"); err != nil {
			t.Fatal(err)
		}
	}
	if title, ok := rawjson.LookupString(out, "params", "update", "title"); ok && strings.HasPrefix(title, "Subagent: ") {
		if out, err = rawjson.Set(out, []byte(`"spawnAgent"`), "params", "update", "title"); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

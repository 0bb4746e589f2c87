package claude_test

import (
	"github.com/acp-normalize/acp-normalize/internal/rawjson"
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/rewrite/claude"
)

// claudeModule is the module under test with the default configuration.
func claudeModule() rewrite.Module { return claude.Module() }

// metaValue returns _meta["acp-normalize"][key] of obj.
func metaValue(obj []byte, key string) ([]byte, bool) {
	if obj == nil {
		return nil, false
	}
	return rawjson.Lookup(obj, "_meta", "acp-normalize", key)
}

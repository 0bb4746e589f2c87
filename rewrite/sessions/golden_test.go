package sessions_test

import (
	"testing"

	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/rewrite/claude"
	"github.com/acp-normalize/acp-normalize/rewrite/codex"
	"github.com/acp-normalize/acp-normalize/rewrite/cursor"
	"github.com/acp-normalize/acp-normalize/rewrite/gemini"
	"github.com/acp-normalize/acp-normalize/rewrite/methods"
	"github.com/acp-normalize/acp-normalize/rewrite/opencode"
	"github.com/acp-normalize/acp-normalize/rewrite/qwen"
	"github.com/acp-normalize/acp-normalize/rewrite/sessions"
	"github.com/acp-normalize/acp-normalize/route/routetest"
)

// modules is the binary's module list (cmd/acp-normalize allModules,
// which TestModuleListMatches there keeps equal): the sessions module
// works on what the vendor modules made of the stream, so it is tested
// behind all of them.
func modules() []rewrite.Module {
	vendors := []rewrite.Module{cursor.Module(), claude.Module(), codex.Module(), gemini.Module(), qwen.Module(), opencode.Module()}
	return append(vendors, sessions.Module(vendors), methods.Module())
}

// TestGolden runs testdata/golden/*.txtar (named by the rule they pin)
// through the whole module list.
func TestGolden(t *testing.T) {
	routetest.RunGolden(t, func(string) []rewrite.Module { return modules() })
}

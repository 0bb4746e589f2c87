package gemini_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
	"github.com/acp-normalize/acp-normalize/rewrite/gemini"
	"github.com/acp-normalize/acp-normalize/route/routetest"
)

// capturesDir holds every vendor's whole-session captures; the Gemini
// ones are real recordings (testdata/captures/gemini/README.md).
var capturesDir = filepath.Join("..", "..", "testdata", "captures")

// captureCases: the last snapshot of each real recording's launch call,
// whatever ids the recording has. Gemini adds no frame (no Emits).
var captureCases = map[string]routetest.CaptureWant{
	"codebase-investigator.jsonl": {Snapshots: map[string]map[string]any{"*/*": {
		"vendor": "gemini", "toolName": "invoke_agent", "subagentType": "codebase_investigator", "status": "completed"}}},
	"cli-help.jsonl": {Snapshots: map[string]map[string]any{"*/*": {
		"vendor": "gemini", "toolName": "invoke_agent", "subagentType": "cli_help", "status": "completed"}}},
	"generalist.jsonl": {Snapshots: map[string]map[string]any{"*/*": { // denied by Gemini's policy: one failed update, no title
		"vendor": "gemini", "toolName": "invoke_agent", "status": "failed"}}},
	"subagents.jsonl": {Snapshots: map[string]map[string]any{"*/*": { // clientCapabilities.subagents is ignored by Gemini
		"vendor": "gemini", "toolName": "invoke_agent", "subagentType": "codebase_investigator", "status": "completed"}}},
}

// TestCaptures replays each real Gemini CLI recording through a Router
// with the gemini module (routetest.CheckCaptures: P1, P3, M, V2, and the
// .replay.jsonl golden beside the capture, -update rewrites it).
func TestCaptures(t *testing.T) {
	routetest.CheckCaptures(t, filepath.Join(capturesDir, "gemini"), gemini.Module(), isLaunch, captureCases)
}

// isLaunch: Gemini CLI's launch calls are the invoke_agent tool calls,
// whose ids start with invoke_agent__ (docs/gemini.md).
func isLaunch(obj []byte) bool {
	id, _ := rawjson.LookupString(obj, "toolCallId")
	return strings.HasPrefix(id, "invoke_agent__")
}

// TestOtherVendors: on every other vendor's capture the module changes
// nothing (V1), byte for byte.
func TestOtherVendors(t *testing.T) {
	routetest.NothingOnOthers(t, capturesDir, gemini.Module())
}

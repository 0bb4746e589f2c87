package rewrite

import (
	"encoding/json"
	"io/fs"
	"slices"
	"testing"

	"github.com/acp-normalize/acp-normalize/internal/acpschema"
)

// TestStandardMethods checks the compiled method list against the ACP
// schema's method lists (rule V7): v1/meta.json and meta.unstable.json of
// the embedded schema (internal/acpschema), every agent, client and
// protocol method, and nothing else.
func TestStandardMethods(t *testing.T) {
	var fromSchema []string
	for _, name := range []string{"v1/meta.json", "v1/meta.unstable.json"} {
		b, err := fs.ReadFile(acpschema.Files(), name)
		if err != nil {
			t.Fatal(err)
		}
		var meta map[string]json.RawMessage
		if err := json.Unmarshal(b, &meta); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, list := range []string{"agentMethods", "clientMethods", "protocolMethods"} {
			var methods map[string]string
			if err := json.Unmarshal(meta[list], &methods); err != nil {
				t.Fatalf("%s %s: %v", name, list, err)
			}
			for _, m := range methods {
				fromSchema = append(fromSchema, m)
			}
		}
	}
	slices.Sort(fromSchema)
	fromSchema = slices.Compact(fromSchema)
	compiled := slices.Sorted(slices.Values(StandardMethods()))
	if !slices.Equal(compiled, fromSchema) {
		t.Fatalf("StandardMethods differs from the schema:\ncompiled %v\nschema   %v", compiled, fromSchema)
	}
}

func TestMethodFilter(t *testing.T) {
	f := NewMethodFilter()
	tests := []struct {
		method  string
		unknown bool
	}{
		{"session/update", false},
		{"session/request_permission", false},
		{"elicitation/create", false},
		{"$/cancel_request", false},
		{"_qwencode/start_turn", false},
		{"_cursor/task", false},
		{"craft/drainMidTurnQueue", true},
		{"qwen/notify/session/mode-update", true},
		{"cursor/task", true},
		{"", true},
	}
	for _, tt := range tests {
		t.Run(tt.method, func(t *testing.T) {
			if got := f.Unknown(tt.method); got != tt.unknown {
				t.Fatalf("Unknown(%q) = %v, want %v", tt.method, got, tt.unknown)
			}
		})
	}
}

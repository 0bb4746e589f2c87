package sessions

import (
	"strings"
	"testing"
	"unicode"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
	"github.com/acp-normalize/acp-normalize/rewrite/meta"
)

// TestS1ChildID pins rules S1 and S4's derivation of a synthesized
// child's id: deterministic, different per parent, toolCallId and launch
// count, printable without newline, and recognised as the proxy's (S5).
func TestS1ChildID(t *testing.T) {
	a := childID("s", "call-1\nfc_2", 0)
	if a != childID("s", "call-1\nfc_2", 0) {
		t.Error("not deterministic")
	}
	for _, other := range []string{childID("s2", "call-1\nfc_2", 0), childID("s", "call-1", 0), childID("s", "call-1\nfc_2", 1)} {
		if other == a {
			t.Errorf("collision: %s", a)
		}
	}
	for _, r := range a {
		if !unicode.IsPrint(r) || r == ' ' {
			t.Errorf("unprintable %q in %q", r, a)
		}
	}
	if !strings.HasPrefix(a, childPrefix) || len(a) != len(childPrefix)+24 {
		t.Errorf("%q is not %s + 24 hex digits", a, childPrefix)
	}
}

// TestS4StateOf pins S4's mapping of the snapshot status to the child's
// state.
func TestS4StateOf(t *testing.T) {
	tests := []struct {
		status meta.Status
		want   childState
	}{
		{meta.StatusPending, childState{State: "running"}},
		{meta.StatusRunning, childState{State: "running"}},
		{meta.StatusLaunched, childState{State: "running"}},
		{"", childState{State: "running"}},
		{meta.StatusCompleted, childState{"idle", "end_turn"}},
		{meta.StatusCancelled, childState{"idle", "cancelled"}},
		{meta.StatusFailed, childState{State: "idle"}},
	}
	for _, tt := range tests {
		if got := stateOf(tt.status); got != tt.want {
			t.Errorf("stateOf(%q) = %+v, want %+v", tt.status, got, tt.want)
		}
	}
}

// TestS8P4Floor: a snapshot never goes back from what the client was
// sent (a lower rank, or another end once an end was sent), and a
// detached launch moves on to the subagent's end.
func TestS8P4Floor(t *testing.T) {
	tests := []struct {
		name          string
		vendor, floor meta.Status
		fold          meta.Status
		want          meta.Status
	}{
		{"pending after running (S8)", meta.StatusPending, meta.StatusRunning, "", meta.StatusRunning},
		{"vendor further", meta.StatusCompleted, meta.StatusRunning, "", meta.StatusCompleted},
		{"an end stays", meta.StatusCompleted, meta.StatusCancelled, "", meta.StatusCancelled},
		{"launched moves on to the end", meta.StatusLaunched, meta.StatusCompleted, "", meta.StatusCompleted},
		{"end after launched", meta.StatusCompleted, meta.StatusLaunched, "", meta.StatusCompleted},
		{"draft end folds over launched (S6)", meta.StatusLaunched, meta.StatusLaunched, meta.StatusCompleted, meta.StatusCompleted},
		{"draft end does not replace the vendor's", meta.StatusFailed, "", meta.StatusCompleted, meta.StatusFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &meta.Subagent{Vendor: "v", Status: tt.vendor}
			fd := fold{status: tt.fold}
			fd.apply(s, tt.floor)
			if s.Status != tt.want {
				t.Errorf("status %q, want %q", s.Status, tt.want)
			}
		})
	}
}

// TestS0Truthy: _meta.subagents opts in when JavaScript reads it as true.
func TestS0Truthy(t *testing.T) {
	for raw, want := range map[string]bool{"true": true, "{}": true, "[]": true, `"x"`: true, "1": true, "-0.5": true,
		"false": false, "null": false, "0": false, "0.0": false, `""`: false, "": false} {
		var v []byte
		if raw != "" {
			v = []byte(raw)
		}
		if got := rawjson.Truthy(v); got != want {
			t.Errorf("rawjson.Truthy(%s) = %v, want %v", raw, got, want)
		}
	}
}

// TestS4AppendLink: the link block is added once, whatever the spelling
// of one already there (JSON a parser reads the same is treated
// the same; the fix of Cursor's S1 code, ported).
func TestS4AppendLink(t *testing.T) {
	tests := []struct{ name, content, want string }{
		{"empty", `[]`, `[{"type":"session","sessionId":"c"}]`},
		{"after a block", `[{"type":"text","text":"x"}]`, `[{"type":"text","text":"x"},{"type":"session","sessionId":"c"}]`},
		{"already there", `[{"type":"session","sessionId":"c"}]`, `[{"type":"session","sessionId":"c"}]`},
		{"already there, spelled otherwise", `[{"sessionId": "\u0063", "type": "session"}]`, `[{"sessionId": "\u0063", "type": "session"}]`},
		{"another child's", `[{"type":"session","sessionId":"d"}]`, `[{"type":"session","sessionId":"d"},{"type":"session","sessionId":"c"}]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := appendLink([]byte(tt.content), "c")
			if err != nil || string(got) != tt.want {
				t.Errorf("appendLink(%s) = %s, %v; want %s", tt.content, got, err, tt.want)
			}
		})
	}
}

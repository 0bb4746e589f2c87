package rewrite

import (
	"slices"
	"strings"
	"testing"

	"github.com/acp-normalize/acp-normalize/pipe"
)

func TestIdentity(t *testing.T) {
	// result is the answer to the client's initialize naming agent name,
	// as the router hands it over (Frame.Initialize).
	result := func(name string) *Frame {
		f := NewFrame(pipe.Agent, []byte(`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentInfo":{"name":"`+name+`","version":"1"}}}`), 1)
		f.Initialize = true
		return f
	}
	// other is another response naming agent name (a
	// session/new result with agentInfo).
	other := NewFrame(pipe.Agent, []byte(`{"jsonrpc":"2.0","id":1,"result":{"sessionId":"S","agentInfo":{"name":"codex-x"}}}`), 1)
	update := NewFrame(pipe.Agent, []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"S","update":{}}}`), 2)
	tests := []struct {
		name     string
		settings Settings
		frames   []*Frame
		want     []bool
	}{
		{"unknown until the initialize result", nil, []*Frame{update, result("codex-x"), update}, []bool{false, false, true}},
		{"another agent", nil, []*Frame{result("gemini-cli"), update}, []bool{false, false}},
		{"exact match only", nil, []*Frame{result("Codex-X"), update}, []bool{false, false}},
		{"a client frame names nothing", nil, []*Frame{NewFrame(pipe.Client, result("codex-x").Raw, 1), update}, []bool{false, false}},
		{"V1: another response names nothing", nil, []*Frame{other, update}, []bool{false, false}},
		{"V1: nor after the initialize result named another agent", nil, []*Frame{result("gemini-cli"), other, update}, []bool{false, false, false}},
		{"--vendor names the module", Settings{VendorOption: "codex"}, []*Frame{update}, []bool{true}},
		{"--vendor names another module", Settings{VendorOption: "qwen"}, []*Frame{update, result("codex-x"), update}, []bool{false, false, true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := NewIdentity(Env{Settings: tt.settings}, "codex", "codex-x", "codex-y")
			for i, f := range tt.frames {
				if got := id.Known(f); got != tt.want[i] {
					t.Errorf("frame %d: Known = %v, want %v", i+1, got, tt.want[i])
				}
			}
		})
	}
}

func TestClosedSession(t *testing.T) {
	tests := []struct {
		name  string
		from  pipe.Side
		frame string
		sid   string
		ok    bool
	}{
		{"client closes", pipe.Client, `{"jsonrpc":"2.0","id":1,"method":"session/close","params":{"sessionId":"S"}}`, "S", true},
		{"from the agent", pipe.Agent, `{"jsonrpc":"2.0","id":1,"method":"session/close","params":{"sessionId":"S"}}`, "", false},
		{"another method", pipe.Client, `{"jsonrpc":"2.0","id":1,"method":"session/cancel","params":{"sessionId":"S"}}`, "", false},
		{"no sessionId", pipe.Client, `{"jsonrpc":"2.0","id":1,"method":"session/close","params":{}}`, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sid, ok := ClosedSession(NewFrame(tt.from, []byte(tt.frame), 1))
			if sid != tt.sid || ok != tt.ok {
				t.Errorf("ClosedSession = %q, %v; want %q, %v", sid, ok, tt.sid, tt.ok)
			}
		})
	}
}

// TestVendorNames: --vendor names exactly the modules that wait for their
// agent's agentInfo.name (V1), and its usage says so from the same list.
func TestVendorNames(t *testing.T) {
	noop := func(Env) Rewriter { return nil }
	mods := []Module{
		{Name: "a", Triggers: []string{AgentInfoTrigger}, New: noop},
		{Name: "b", Triggers: []string{`"x"`}, New: noop},
		{Name: "c", Triggers: []string{`"y"`, AgentInfoTrigger}, New: noop},
	}
	if got := VendorNames(mods); !slices.Equal(got, []string{"a", "c"}) {
		t.Fatalf("VendorNames = %v, want [a c]", got)
	}
	for _, o := range SharedOptions(mods) {
		if o.Name == VendorOption && !strings.Contains(o.Usage, "(a, c)") {
			t.Errorf("--vendor usage %q does not name a and c", o.Usage)
		}
	}
}

// TestRuleOf: a vendor method's rule is its exact entry, else the longest
// prefix entry that matches (what check cites).
func TestRuleOf(t *testing.T) {
	m := Module{MethodRules: map[string]string{"acme/ping": "A1", "acme/*": "A9", "acme/admin/*": "A5"}}
	for method, want := range map[string]string{"acme/ping": "A1", "acme/pong": "A9", "acme/admin/x": "A5", "other/x": ""} {
		got, ok := m.RuleOf(method)
		if got != want || ok != (want != "") {
			t.Errorf("RuleOf(%q) = %q, %v; want %q", method, got, ok, want)
		}
	}
}

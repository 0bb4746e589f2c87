package rewrite

import (
	"reflect"
	"strings"
	"testing"
)

// TestP7ClientIdentify pins how the connection's client is known (rule
// P7): the modules' tables name the methods a client handles, the kit's
// table its traits, and the shared options replace either.
func TestP7ClientIdentify(t *testing.T) {
	mods := []Module{{
		Name: "v", VendorMethods: []string{"v/*"},
		HandledByClients: []ClientMethods{{Client: "ed", Methods: []string{"v/task"}}},
	}, {
		Name: "w", VendorMethods: []string{"w/ask"},
		HandledByClients: []ClientMethods{{Client: "ed", Methods: []string{"w/ask", "v/task"}}},
	}}
	cases := []struct {
		name       string
		client     string
		settings   Settings
		handles    []string
		traits     []Trait
		notHandled string
	}{
		{name: "table of every module", client: "ed", handles: []string{"v/task", "w/ask"}, notHandled: "v/other"},
		{name: "unknown client", client: "other", notHandled: "v/task"},
		{name: "no clientInfo", client: "", notHandled: "v/task"},
		{name: "option replaces the table", client: "ed", settings: Settings{ClientHandlesOption: "v/other, w/ask,v/other"},
			handles: []string{"v/other", "w/ask"}, notHandled: "v/task"},
		{name: "none turns the table off", client: "ed", settings: Settings{ClientHandlesOption: "none"}, notHandled: "v/task"},
		{name: "known traits", client: "CodeCompanion.nvim", traits: []Trait{TraitFinishedAsNew}, notHandled: "v/task"},
		{name: "traits option", client: "ed", settings: Settings{ClientTraitsOption: "reprints-finished"},
			handles: []string{"v/task", "w/ask"}, traits: []Trait{TraitReprintsFinished}},
		{name: "traits none", client: "CodeCompanion.nvim", settings: Settings{ClientTraitsOption: "none"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var c Client
			c.Identify(tc.client, mods, tc.settings)
			if got := c.Handled(); !reflect.DeepEqual(got, tc.handles) {
				t.Errorf("Handled = %q, want %q", got, tc.handles)
			}
			if got := c.TraitList(); !reflect.DeepEqual(got, tc.traits) {
				t.Errorf("TraitList = %q, want %q", got, tc.traits)
			}
			for _, m := range tc.handles {
				if !c.Handles(m) {
					t.Errorf("Handles(%q) = false", m)
				}
			}
			if tc.notHandled != "" && c.Handles(tc.notHandled) {
				t.Errorf("Handles(%q) = true", tc.notHandled)
			}
			if c.Name() != tc.client {
				t.Errorf("Name = %q, want %q", c.Name(), tc.client)
			}
		})
	}
}

// TestP7Emit pins what may be emitted for a call by trait (rule P7).
func TestP7Emit(t *testing.T) {
	var none *Client
	cc, acpx := &Client{traits: []Trait{TraitFinishedAsNew}}, &Client{traits: []Trait{TraitReprintsFinished}}
	for _, tc := range []struct {
		name     string
		c        *Client
		finished bool
		want     Emission
	}{
		{"unknown client, finished", none, true, EmitAll},
		{"finished-as-new, running", cc, false, EmitAll},
		{"finished-as-new, finished", cc, true, EmitNothing},
		{"reprints-finished, finished", acpx, true, EmitSnapshotOnly},
		{"reprints-finished, running", acpx, false, EmitAll},
	} {
		if got := tc.c.Emit(tc.finished); got != tc.want {
			t.Errorf("%s: Emit = %d, want %d", tc.name, got, tc.want)
		}
	}
	if !Finished("completed") || !Finished("failed") || Finished("in_progress") || Finished("") {
		t.Error("Finished: completed and failed are terminal, nothing else")
	}
}

// TestP7CheckClientSettings: a typo in either option is a usage error,
// not a silent no-op.
func TestP7CheckClientSettings(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    Settings
		want string // "" for no error
	}{
		{"unset", Settings{}, ""},
		{"vendor methods", Settings{ClientHandlesOption: "cursor/task,_cursor/task,craft/x"}, ""},
		{"none", Settings{ClientHandlesOption: "none", ClientTraitsOption: "none"}, ""},
		{"standard method", Settings{ClientHandlesOption: "cursor/task,session/update"}, "session/update is a standard ACP method"},
		{"empty", Settings{ClientHandlesOption: " "}, "give METHOD,... or none"},
		// "none" among methods was read as a method named "none".
		{"none and a method", Settings{ClientHandlesOption: "none,cursor/task"}, "none leaves no method to the client: give it alone"},
		{"none and a trait", Settings{ClientTraitsOption: "finished-as-new,none"}, "none: give it alone"},
		{"known trait", Settings{ClientTraitsOption: "finished-as-new,reprints-finished"}, ""},
		{"unknown trait", Settings{ClientTraitsOption: "finished"}, `unknown trait "finished"`},
	} {
		err := CheckClientSettings(tc.s)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: error %v, want one with %q", tc.name, err, tc.want)
		}
	}
}

// TestP7ValidateHandledByClients: a module's table names only its own
// vendor methods.
func TestP7ValidateHandledByClients(t *testing.T) {
	m := Module{Name: "v", Doc: "d", Triggers: []string{"x"}, New: func(Env) Rewriter { return nil },
		VendorMethods:    []string{"v/*"},
		HandledByClients: []ClientMethods{{Client: "ed", Methods: []string{"v/task", "w/task"}}, {Methods: []string{"v/a"}}}}
	err := Validate([]Module{m})
	if err == nil || !strings.Contains(err.Error(), `"w/task", which is none of the module's VendorMethods`) ||
		!strings.Contains(err.Error(), "names no client") {
		t.Fatalf("Validate = %v", err)
	}
}

// TestP7KnownClientsTable: every row is named and every trait is one the
// kit knows, so the table and --client-traits agree.
func TestP7KnownClientsTable(t *testing.T) {
	seen := map[string]bool{}
	for _, k := range KnownClients() {
		if k.Name == "" || k.Product == "" || k.Seen == "" || seen[k.Name] {
			t.Errorf("row %+v: name, product and what was seen are required, names unique", k)
		}
		seen[k.Name] = true
		for _, tr := range k.Traits {
			if CheckClientSettings(Settings{ClientTraitsOption: string(tr)}) != nil {
				t.Errorf("%s: trait %q unknown", k.Name, tr)
			}
		}
	}
}

package rewrite

import (
	"reflect"
	"testing"

	"github.com/acp-normalize/acp-normalize/rewrite/table"
)

func TestOptions(t *testing.T) {
	mods := []Module{
		{Name: "a", Options: []Option{{Name: "a-switch", Usage: "u"}, {Name: "a-name", Usage: "u", Kind: StringOption, Default: "x"}}},
		{Name: "b", Options: []Option{{Name: "b-switch", Usage: "u"}, {Name: "b-on", Usage: "u", Default: "true"}}},
	}
	all := AllOptions(mods)
	var names []string
	for _, o := range all {
		names = append(names, o.Name)
	}
	if want := []string{ForwardUnknownVendorMethods, VendorOption, ClientHandlesOption, ClientTraitsOption, "a-switch", "a-name", "b-switch", "b-on"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("AllOptions = %v, want %v", names, want)
	}
	if got := all[4].EnvVar(); got != "ACP_NORMALIZE_A_SWITCH" {
		t.Fatalf("EnvVar = %q", got)
	}
	tests := []struct {
		name     string
		settings Settings
		recorded []string
	}{
		{"defaults record nothing", Settings{"a-name": "x"}, nil},
		{"switches on in option order", Settings{"b-switch": "true", ForwardUnknownVendorMethods: "true"}, []string{ForwardUnknownVendorMethods, "b-switch"}},
		{"switch off is not recorded", Settings{"a-switch": "false"}, nil},
		{"string value", Settings{"a-name": "y"}, []string{"a-name=y"}},
		{"vendor (V1)", Settings{VendorOption: "codex"}, []string{"vendor=codex"}},
		{"switch on by default, turned off", Settings{"b-on": "false"}, []string{"b-on=false"}},
		{"switch on by default, left on", Settings{"b-on": "true"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.settings.Recorded(all)
			if !reflect.DeepEqual(got, tt.recorded) {
				t.Fatalf("Recorded = %q, want %q", got, tt.recorded)
			}
			back, unknown := ParseRecorded(got, all)
			if len(unknown) > 0 {
				t.Fatalf("ParseRecorded: unknown %q", unknown)
			}
			if !reflect.DeepEqual(back.Resolve(all), tt.settings.Resolve(all)) {
				t.Fatalf("round trip: %v, want %v", back.Resolve(all), tt.settings.Resolve(all))
			}
		})
	}
	if _, unknown := ParseRecorded([]string{"nope", "a-switch=1", "a-name"}, all); len(unknown) != 3 {
		t.Fatalf("unknown = %q, want all three", unknown)
	}
	// A bool on by default: On reads the default, a recorded
	// "name=false" turns it off, a bare name (how a capture made when it
	// was off by default recorded it) and "name=true" leave it on.
	on := all[len(all)-1]
	if !(Settings{}).On(on) || (Settings{}).On(all[4]) {
		t.Fatal("On: defaults wrong")
	}
	for rec, want := range map[string]bool{"b-on=false": false, "b-on": true, "b-on=true": true} {
		s, unknown := ParseRecorded([]string{rec}, all)
		if len(unknown) > 0 || s.On(on) != want || s.Resolve(all).Bool("b-on") != want {
			t.Errorf("ParseRecorded(%q): On = %v, unknown %q; want %v", rec, s.On(on), unknown, want)
		}
	}
}

// TestNewTable: a module's table takes the connection's logger, budget
// and entry cap from its Env (P6), unless the module set its own.
func TestNewTable(t *testing.T) {
	budget := table.NewBudget(1 << 20)
	tb := NewTable(Env{Budget: budget, MaxEntries: 2}, table.Config[int, int]{Name: "t"})
	for i := range 3 {
		tb.Put(i, i)
	}
	if tb.Len() != 2 {
		t.Errorf("Len = %d, want the Env's cap 2", tb.Len())
	}
	own := NewTable(Env{MaxEntries: 2}, table.Config[int, int]{Name: "t", Entries: 3})
	for i := range 4 {
		own.Put(i, i)
	}
	if own.Len() != 3 {
		t.Errorf("Len = %d, want the module's own cap 3", own.Len())
	}
}

func TestValidateOptions(t *testing.T) {
	mk := func(name string, opts ...Option) Module {
		return Module{Name: name, Doc: "d", Triggers: []string{"x"}, New: func(Env) Rewriter { return nil }, Options: opts}
	}
	tests := []struct {
		name string
		mods []Module
		ok   bool
	}{
		{"distinct", []Module{mk("a", Option{Name: "a-x", Usage: "u"}), mk("b", Option{Name: "b-x", Usage: "u"})}, true},
		{"twice", []Module{mk("a", Option{Name: "x", Usage: "u"}), mk("b", Option{Name: "x", Usage: "u"})}, false},
		{"shared name taken", []Module{mk("a", Option{Name: ForwardUnknownVendorMethods, Usage: "u"})}, false},
		{"bad name", []Module{mk("a", Option{Name: "Bad", Usage: "u"})}, false},
		{"no usage", []Module{mk("a", Option{Name: "a-x"})}, false},
		{"bool on by default", []Module{mk("a", Option{Name: "a-x", Usage: "u", Default: "true"})}, true},
		{"bool default neither true nor false", []Module{mk("a", Option{Name: "a-x", Usage: "u", Default: "yes"})}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := Validate(tt.mods); (err == nil) != tt.ok {
				t.Fatalf("Validate = %v, want ok %v", err, tt.ok)
			}
		})
	}
}

// TestCheckChoices: a StringOption with Choices accepts those values
// only; an option without Choices, or not set, is not checked.
func TestCheckChoices(t *testing.T) {
	opts := []Option{
		{Name: "mode", Kind: StringOption, Default: "auto", Choices: []string{"auto", "on", "off"}},
		{Name: "free", Kind: StringOption},
	}
	tests := []struct {
		name string
		s    Settings
		ok   bool
	}{
		{"unset", Settings{}, true},
		{"a choice", Settings{"mode": "on"}, true},
		{"not a choice", Settings{"mode": "yes"}, false},
		{"empty is no choice", Settings{"mode": ""}, false},
		{"no choices", Settings{"free": "anything"}, true},
	}
	for _, tc := range tests {
		if err := CheckChoices(opts, tc.s); (err == nil) != tc.ok {
			t.Errorf("%s: err = %v, want ok %v", tc.name, err, tc.ok)
		}
	}
}

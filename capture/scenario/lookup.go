package scenario

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
)

// book holds every vendor's scenarios: one exported method per vendor,
// named after the vendor's module (Qwen for qwen, OpenCode for opencode),
// in the vendor's own file, returning its scenarios by name. Lookup and
// Vendors find the methods by name, so a new vendor adds its file and no
// line here; cmd/acp-normalize's tests check the names against the module
// list and the capture/agents scripts.
type book struct{}

// scenarios returns the scenarios of vendor, or false if no method of
// book is named after it.
func scenarios(vendor string, p Params) (map[string]Scenario, bool) {
	v := reflect.ValueOf(book{})
	for i := range v.NumMethod() {
		if strings.EqualFold(v.Type().Method(i).Name, vendor) {
			return v.Method(i).Interface().(func(Params) map[string]Scenario)(p), true
		}
	}
	return nil, false
}

// Lookup returns the scenario "vendor/name".
func Lookup(id string, p Params) (Scenario, error) {
	vendor, name, ok := strings.Cut(id, "/")
	if !ok {
		return Scenario{}, fmt.Errorf("scenario %q: want vendor/name", id)
	}
	all, ok := scenarios(vendor, p)
	if !ok {
		return Scenario{}, fmt.Errorf("scenario %q: unknown vendor (have %s)", id, strings.Join(Vendors(), ", "))
	}
	sc, ok := all[name]
	if !ok {
		names := make([]string, 0, len(all))
		for n := range all {
			names = append(names, n)
		}
		sort.Strings(names)
		return Scenario{}, fmt.Errorf("scenario %q: unknown (%s has %s)", id, vendor, strings.Join(names, ", "))
	}
	return sc, nil
}

// Vendors lists the vendors with scenarios, sorted.
func Vendors() []string {
	t := reflect.TypeFor[book]()
	names := make([]string, 0, t.NumMethod())
	for i := range t.NumMethod() {
		names = append(names, strings.ToLower(t.Method(i).Name))
	}
	sort.Strings(names)
	return names
}

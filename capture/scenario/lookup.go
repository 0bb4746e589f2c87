package scenario

import (
	"fmt"
	"sort"
	"strings"
)

// vendorScenarios lists one vendor's scenarios by name.
type vendorScenarios func(Params) map[string]Scenario

// vendors maps each vendor to its scenarios; one file per vendor.
func vendors() map[string]vendorScenarios {
	return map[string]vendorScenarios{
		"qwen":     qwen,
		"opencode": opencode,
		"claude":   claude,
		"codex":    codex,
		"gemini":   gemini,
	}
}

// Lookup returns the scenario "vendor/name".
func Lookup(id string, p Params) (Scenario, error) {
	vendor, name, ok := strings.Cut(id, "/")
	if !ok {
		return Scenario{}, fmt.Errorf("scenario %q: want vendor/name", id)
	}
	list, ok := vendors()[vendor]
	if !ok {
		return Scenario{}, fmt.Errorf("scenario %q: unknown vendor (have %s)", id, strings.Join(Vendors(), ", "))
	}
	all := list(p)
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
	var names []string
	for n := range vendors() {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

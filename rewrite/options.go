package rewrite

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// OptionKind is the type of an option's value.
type OptionKind uint8

const (
	// BoolOption is a switch: off by default, --name turns it on; with
	// Default "true" it is on by default and --name=false turns it off.
	BoolOption OptionKind = iota
	// StringOption takes a value: --name VALUE.
	StringOption
)

// Option is a command-line option a module declares (or the kit shares
// with every module, see SharedOptions). The command builds the flag, its
// environment twin, the capture's recorded "options" and replay's
// settings from these declarations; no option name is spelled outside the
// module that reads it.
type Option struct {
	// Name is the flag name (--name): lower case letters, digits and '-'.
	Name string
	// Usage is the flag's one-line help.
	Usage string
	// Kind is the type of the value.
	Kind OptionKind
	// Default is a StringOption's value when it is not given; for a
	// BoolOption, "true" makes it on by default ("" or "false": off).
	Default string
	// Choices, when set, are a StringOption's only accepted values
	// (CheckChoices): any other is a usage error, not a silent default.
	Choices []string
}

// CheckChoices rejects a setting of a StringOption with Choices that is
// none of them.
func CheckChoices(opts []Option, s Settings) error {
	var errs []error
	for _, o := range opts {
		if v, ok := s[o.Name]; ok && o.Kind == StringOption && len(o.Choices) > 0 && !slices.Contains(o.Choices, v) {
			errs = append(errs, fmt.Errorf("--%s: %q is none of %s", o.Name, v, strings.Join(o.Choices, ", ")))
		}
	}
	return errors.Join(errs...)
}

// DefaultOn reports whether o is a bool option that is on unless turned
// off.
func (o Option) DefaultOn() bool { return o.Kind == BoolOption && o.Default == "true" }

// EnvVar is the option's environment twin: ACP_NORMALIZE_ and the name in
// upper case with '_' for '-'.
func (o Option) EnvVar() string {
	return "ACP_NORMALIZE_" + strings.ToUpper(strings.ReplaceAll(o.Name, "-", "_"))
}

// ForwardUnknownVendorMethods is the name of the shared option that passes
// vendor methods a module does not know to the client instead of
// answering -32601 (rules C13, V7).
const ForwardUnknownVendorMethods = "forward-unknown-vendor-methods"

// VendorOption is the name of the shared option that names the agent's
// vendor (a module name) for wrappers that hide the agent's own name in
// the initialize result: that vendor's module acts from the start (V1).
const VendorOption = "vendor"

// SharedOptions are the options every module of mods may read, whatever
// modules are selected. They come first on the command line and in a
// capture. The --vendor usage names the vendors of mods (VendorNames).
func SharedOptions(mods []Module) []Option {
	return []Option{{
		Name:  ForwardUnknownVendorMethods,
		Usage: "pass agent methods no client knows (a vendor's own, such as craft/*) to the client instead of answering requests -32601 and dropping notifications",
	}, {
		Name:  VendorOption,
		Usage: "treat the agent as this vendor's (" + strings.Join(VendorNames(mods), ", ") + ") even when its initialize result does not name it",
		Kind:  StringOption,
	}, {
		Name:  ClientHandlesOption,
		Usage: "the client handles these vendor methods itself (METHOD,...): forward them to it unchanged instead of answering; replaces the table of known clients (none: leave none to the client)",
		Kind:  StringOption,
	}, {
		Name:  ClientTraitsOption,
		Usage: "the client's traits (" + traitNames() + "), whatever its name; replaces the table of known clients (none: no trait)",
		Kind:  StringOption,
	}}
}

// AllOptions lists the shared options, then each module's, in module
// order, without duplicates.
func AllOptions(mods []Module) []Option {
	all := SharedOptions(mods)
	for _, m := range mods {
		for _, o := range m.Options {
			if !slices.ContainsFunc(all, func(a Option) bool { return a.Name == o.Name }) {
				all = append(all, o)
			}
		}
	}
	return all
}

// Settings are option values by name: "true" or "false" for a bool
// option, the value of a string option. A missing name has its default
// (Resolve fills it in; On reads it).
type Settings map[string]string

// Bool reports whether the bool option name is set to "true" (a missing
// name is off: for an option that may be on by default, use On).
func (s Settings) Bool(name string) bool { return s[name] == "true" }

// On reports whether the bool option o is on: as set, else its default.
func (s Settings) On(o Option) bool {
	if v, ok := s[o.Name]; ok {
		return v == "true"
	}
	return o.DefaultOn()
}

// String returns the value of the string option name ("" when not set;
// use Resolve to fill in defaults).
func (s Settings) String(name string) string { return s[name] }

// Resolve returns s with the default of every option of opts that s
// lacks, and without bool options that are off (their absence says
// off, Bool reads it).
func (s Settings) Resolve(opts []Option) Settings {
	out := Settings{}
	for _, o := range opts {
		v, ok := s[o.Name]
		switch {
		case o.Kind == BoolOption && s.On(o):
			out[o.Name] = "true"
		case o.Kind == StringOption && ok:
			out[o.Name] = v
		case o.Kind == StringOption && o.Default != "":
			out[o.Name] = o.Default
		}
	}
	return out
}

// Recorded lists the settings that differ from the defaults as a
// capture's start event records them: the name of a bool option that is
// on by choice, "name=false" for one that is on by default and was
// turned off, "name=value" for a string option, in the order of opts.
func (s Settings) Recorded(opts []Option) []string {
	var out []string
	for _, o := range opts {
		v, ok := s[o.Name]
		switch {
		case !ok:
		case o.Kind == BoolOption && v == "true" && !o.DefaultOn():
			out = append(out, o.Name)
		case o.Kind == BoolOption && v != "true" && o.DefaultOn():
			out = append(out, o.Name+"=false")
		case o.Kind == StringOption && v != o.Default:
			out = append(out, o.Name+"="+v)
		}
	}
	return out
}

// ParseRecorded reads a capture's recorded options (see Recorded) into
// settings; an entry that names no option of opts is returned in unknown.
func ParseRecorded(recorded []string, opts []Option) (s Settings, unknown []string) {
	s = Settings{}
	for _, r := range recorded {
		name, value, hasValue := strings.Cut(r, "=")
		i := slices.IndexFunc(opts, func(o Option) bool { return o.Name == name })
		switch {
		case i < 0,
			opts[i].Kind == StringOption && !hasValue,
			opts[i].Kind == BoolOption && hasValue && value != "true" && value != "false":
			unknown = append(unknown, r)
			continue
		}
		if !hasValue {
			value = "true"
		}
		s[name] = value
	}
	return s, unknown
}

// validateOptions checks that option names are valid and that no two
// modules (or a module and the kit) declare the same one.
func validateOptions(mods []Module) error {
	var errs []error
	owner := map[string]string{}
	for _, o := range SharedOptions(nil) {
		owner[o.Name] = "the kit"
	}
	for _, m := range mods {
		for _, o := range m.Options {
			if !moduleName.MatchString(o.Name) {
				errs = append(errs, fmt.Errorf("module %q: invalid option name %q", m.Name, o.Name))
			}
			if o.Usage == "" {
				errs = append(errs, fmt.Errorf("module %q: option %q has no usage", m.Name, o.Name))
			}
			if o.Kind == BoolOption && o.Default != "" && o.Default != "true" && o.Default != "false" {
				errs = append(errs, fmt.Errorf("module %q: bool option %q has default %q (want true or false)", m.Name, o.Name, o.Default))
			}
			if prev, ok := owner[o.Name]; ok {
				errs = append(errs, fmt.Errorf("module %q: option %q already declared by %s", m.Name, o.Name, prev))
			}
			owner[o.Name] = fmt.Sprintf("module %q", m.Name)
		}
	}
	return errors.Join(errs...)
}

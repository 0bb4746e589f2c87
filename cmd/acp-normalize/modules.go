package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/rewrite/claude"
	"github.com/acp-normalize/acp-normalize/rewrite/cursor"
)

// moduleOptions are the vendor modules' command-line options.
type moduleOptions struct {
	// forwardUnknownVendorMethods passes unknown cursor/* methods to the
	// client instead of answering -32601 (rule C13).
	forwardUnknownVendorMethods bool
	// cursorNativeSubagents asks Cursor for its draft subagent shapes and
	// translates them (rule S2).
	cursorNativeSubagents bool
}

// moduleOptionsFrom reads the module flags; a subcommand sees the global
// flags given before its name.
func moduleOptionsFrom(c *cli.Context) moduleOptions {
	return moduleOptions{
		forwardUnknownVendorMethods: c.Bool("forward-unknown-vendor-methods"),
		cursorNativeSubagents:       c.Bool("cursor-native-subagents"),
	}
}

// names lists the flags that are on, as recorded in a capture.
func (o moduleOptions) names() []string {
	var on []string
	if o.forwardUnknownVendorMethods {
		on = append(on, "forward-unknown-vendor-methods")
	}
	if o.cursorNativeSubagents {
		on = append(on, "cursor-native-subagents")
	}
	return on
}

// allModules is the one place that lists the vendor modules, in the order
// they see each frame.
func allModules(o moduleOptions) []rewrite.Module {
	return []rewrite.Module{
		cursor.Module(cursor.Options{
			ForwardUnknownVendorMethods: o.forwardUnknownVendorMethods,
			NativeSubagents:             o.cursorNativeSubagents,
		}),
		claude.Module(claude.Config{}),
	}
}

// selectModules picks modules by a --modules value: "all", "none" or a
// comma-separated list of names.
func selectModules(all []rewrite.Module, spec string) ([]rewrite.Module, error) {
	spec = strings.TrimSpace(spec)
	switch spec {
	case "", "all":
		return all, nil
	case "none":
		return nil, nil
	}
	byName := make(map[string]rewrite.Module, len(all))
	names := make([]string, 0, len(all))
	for _, m := range all {
		byName[m.Name] = m
		names = append(names, m.Name)
	}
	var out []rewrite.Module
	seen := map[string]bool{}
	for _, name := range strings.Split(spec, ",") {
		name = strings.TrimSpace(name)
		if name == "" || seen[name] {
			continue
		}
		m, ok := byName[name]
		if !ok {
			return nil, fmt.Errorf("unknown module %q (have: %s, all, none)", name, strings.Join(names, ", "))
		}
		seen[name] = true
		out = append(out, m)
	}
	return out, nil
}

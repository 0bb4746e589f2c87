package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/rewrite/claude"
	"github.com/acp-normalize/acp-normalize/rewrite/codex"
	"github.com/acp-normalize/acp-normalize/rewrite/cursor"
	"github.com/acp-normalize/acp-normalize/rewrite/gemini"
	"github.com/acp-normalize/acp-normalize/rewrite/methods"
	"github.com/acp-normalize/acp-normalize/rewrite/opencode"
	"github.com/acp-normalize/acp-normalize/rewrite/qwen"
	"github.com/acp-normalize/acp-normalize/rewrite/sessions"
)

// allModules is the one place that lists the vendor modules, in the order
// they see each frame. Each module declares its own options.
func allModules() []rewrite.Module {
	vendors := []rewrite.Module{
		cursor.Module(),
		claude.Module(),
		codex.Module(),
		gemini.Module(),
		qwen.Module(),
		opencode.Module(),
	}
	return append(vendors,
		sessions.Module(vendors), // after the vendors: child sessions from what they made of the stream (S0-S8)
		methods.Module(),         // last: vendor modules claim their own methods first (V7)
	)
}

// modulesUsage is the help of every --modules flag, the names from the
// module list.
func modulesUsage() string {
	names := make([]string, 0, len(allModules()))
	for _, m := range allModules() {
		names = append(names, m.Name)
	}
	return "vendor modules to apply: all, none, or a comma-separated list of " + strings.Join(names, ", ")
}

// moduleOptions are the options of every module and the shared ones.
func moduleOptions() []rewrite.Option { return rewrite.AllOptions(allModules()) }

// optionFlags returns a command-line flag for each option; with env, each
// also reads its ACP_NORMALIZE_* environment twin.
func optionFlags(opts []rewrite.Option, env bool) []cli.Flag {
	flags := make([]cli.Flag, 0, len(opts))
	for _, o := range opts {
		var vars []string
		if env {
			vars = []string{o.EnvVar()}
		}
		switch o.Kind {
		case rewrite.StringOption:
			flags = append(flags, &cli.StringFlag{Name: o.Name, Usage: o.Usage, Value: o.Default, EnvVars: vars})
		default:
			flags = append(flags, &cli.BoolFlag{Name: o.Name, Usage: o.Usage, Value: o.DefaultOn(), EnvVars: vars})
		}
	}
	return flags
}

// optionSettings reads the options given before or after a subcommand
// (the nearest wins); only options that were set are in the result.
func optionSettings(c *cli.Context, opts []rewrite.Option) rewrite.Settings {
	s := rewrite.Settings{}
	for _, o := range opts {
		lc := setIn(c, o.Name)
		if lc == nil {
			continue
		}
		if o.Kind == rewrite.StringOption {
			s[o.Name] = lc.String(o.Name)
		} else {
			s[o.Name] = strconv.FormatBool(lc.Bool(o.Name))
		}
	}
	return s
}

// setIn returns the nearest context of c's lineage in which flag name was
// set (on the command line or by its environment variable), or nil. A
// subcommand's flag hides a global flag of the same name from c.Bool and
// c.IsSet, so each level is asked on its own.
func setIn(c *cli.Context, name string) *cli.Context {
	for _, lc := range c.Lineage() {
		if lc.IsSet(name) {
			return lc
		}
	}
	return nil
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

// checkVendor rejects a --vendor value that names no vendor module: a
// module acts on it only when it waits for its agent's agentInfo.name
// (rule V1, rewrite.AgentInfoTrigger), so any other value would be
// silently ignored. An empty value names none.
func checkVendor(all []rewrite.Module, s rewrite.Settings) error {
	v := s.String(rewrite.VendorOption)
	if v == "" {
		return nil
	}
	names := rewrite.VendorNames(all)
	if slices.Contains(names, v) {
		return nil
	}
	return fmt.Errorf("unknown vendor %q (have: %s)", v, strings.Join(names, ", "))
}

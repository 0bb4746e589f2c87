package main

import (
	"errors"
	"regexp"
	"strings"

	"github.com/urfave/cli/v2"
)

// The words a user types before "--" (help, which is urfave's own help
// command, version, probe and the debugging subcommands) are cli commands: a command line with no
// command and no agent stays the proxy's (a usage error today, a
// conductor's component tomorrow, rule K1), and everything after "--" is
// the agent's argv, even "-- help" (see splitAgentArgv).

// oneLineUsageErrors makes a bad flag of any command one line on stderr
// and exit status 2, as at the top level, instead of the command's help
// followed by the error. Each command is replaced by a copy: urfave's help
// command is a package variable of its own.
func oneLineUsageErrors(cmds []*cli.Command) {
	for i, orig := range cmds {
		cmd := *orig
		name := cmd.Name
		flags := cmd.Flags
		cmd.OnUsageError = func(_ *cli.Context, err error, _ bool) error {
			return usageError("%s: %v (see acp-normalize %s --help)", name, flagError(err, flags), name)
		}
		cmd.Subcommands = append([]*cli.Command(nil), cmd.Subcommands...)
		oneLineUsageErrors(cmd.Subcommands)
		cmds[i] = &cmd
	}
}

// The flag package's messages, which urfave passes on: they spell every
// flag with one dash and say "parse error" for a value of the wrong type.
var (
	undefinedFlag = regexp.MustCompile(`^flag provided but not defined: -+(.+)$`)
	badFlagValue  = regexp.MustCompile(`^invalid value ("(?:[^"\\]|\\.)*") for flag -+([^:]+): (.*)$`)
	flagNoValue   = regexp.MustCompile(`^flag needs an argument: -+(.+)$`)
	badBoolValue  = regexp.MustCompile(`^invalid boolean value ("(?:[^"\\]|\\.)*") for -+([^:]+): `)
)

// flagError says a flag mistake with the flag as the user types it
// (--kill-grace, -o) and, for a value of the wrong type, what is wanted.
func flagError(err error, flags []cli.Flag) error {
	msg := err.Error()
	if m := undefinedFlag.FindStringSubmatch(msg); m != nil {
		return errors.New("unknown flag " + dashed(m[1]))
	}
	if m := flagNoValue.FindStringSubmatch(msg); m != nil {
		return errors.New(dashed(m[1]) + " needs a value")
	}
	if m := badBoolValue.FindStringSubmatch(msg); m != nil {
		return errors.New(dashed(m[2]) + ": invalid value " + m[1] + ": want true or false")
	}
	if m := badFlagValue.FindStringSubmatch(msg); m != nil {
		want := m[3]
		for _, f := range flags {
			if _, ok := f.(*cli.DurationFlag); ok && contains(f.Names(), m[2]) {
				want = "want a duration such as 3s or 500ms"
			}
		}
		if want == "parse error" {
			want = "not a value of this flag's type"
		}
		return errors.New(dashed(m[2]) + ": invalid value " + m[1] + ": " + want)
	}
	return err
}

func dashed(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + strings.TrimLeft(name, "-")
}

func contains(names []string, name string) bool {
	for _, n := range names {
		if n == name {
			return true
		}
	}
	return false
}

package main

import (
	"errors"
	"flag"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"
)

// The words a user types before "--" (help, version, probe and the
// debugging subcommands) are cli commands: a command line with no
// command and no agent stays the proxy's (a usage error today, a
// conductor's component tomorrow, rule K1), and everything after "--" is
// the agent's argv, even "-- help" (see splitAgentArgv).

// helpWord is the help command: the app's help, or a command's (a name
// of no command reaches the app's CommandNotFound). The app has its own
// rather than urfave's, a package variable that every app shares, so that
// it gets the one-line usage errors of every other command (see
// oneLineUsageErrors).
func helpWord() *cli.Command {
	return &cli.Command{
		Name:      "help",
		Aliases:   []string{"h"},
		Usage:     "Shows a list of commands or help for one command",
		ArgsUsage: "[command]",
		// No help command of its own: "help help" is the help of help.
		HideHelpCommand: true,
		Action: func(c *cli.Context) error {
			top := c.Lineage()[1] // the app's context, whose commands these are
			if !c.Args().Present() {
				return cli.ShowAppHelp(top)
			}
			return cli.ShowCommandHelp(top, c.Args().First())
		},
	}
}

// oneLineUsageErrors makes a bad flag of any of the app's commands one
// line on stderr and exit status 2, as at the top level, instead of the
// command's help followed by the error. Every command is the app's own
// (helpWord included), so setting it changes no other app.
func oneLineUsageErrors(app *cli.App) {
	for _, cmd := range app.Commands {
		cmd.OnUsageError = func(c *cli.Context, err error, _ bool) error {
			// The app's context holds the command's name and arguments.
			args := c.Lineage()[1].Args().Tail()
			return usageError("%s: %v (see acp-normalize %s --help)", cmd.Name, flagMistake(args, cmd.Flags, err), cmd.Name)
		}
	}
}

// flagMistake says the first flag mistake in args, the arguments a command
// with flags failed to parse, with the flag as the user types it
// (--kill-grace, -o) and, for a value the flag refuses, what it wants.
// The flag package's errors are only text, so args are parsed again, as
// the command parsed them, with values that tell which flag refused
// which value. parseErr, the command's error, stands when the mistake is
// none of those (bad syntax such as ---x, a bad value in an environment
// variable).
func flagMistake(args []string, flags []cli.Flag, parseErr error) error {
	fs := flag.NewFlagSet("", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	for _, f := range flags {
		if f.Apply(fs) != nil {
			return parseErr
		}
	}
	var refused *refusingValue
	fs.VisitAll(func(f *flag.Flag) { f.Value = &refusingValue{Value: f.Value, name: f.Name, refused: &refused} })
	if fs.Parse(args) == nil {
		return parseErr
	}
	if refused != nil {
		return errors.New(dashed(refused.name) + ": invalid value " + strconv.Quote(refused.value) + ": " + wanted(refused, flags))
	}
	// The parse consumed the flag it stopped at, unless its syntax was
	// bad (---x, -=x): then that one is left.
	i := len(args) - len(fs.Args()) - 1
	if i < 0 || i >= len(args) {
		return parseErr
	}
	name, _, _ := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(args[i], "-"), "-"), "=")
	switch {
	case name == "" || name[0] == '-' || name[0] == '=':
		return parseErr
	case fs.Lookup(name) == nil:
		return errors.New("unknown flag " + dashed(name))
	}
	return errors.New(dashed(name) + " needs a value")
}

// refusingValue is a flag's value that notes the first value it refuses.
type refusingValue struct {
	flag.Value
	name, value string
	refused     **refusingValue
}

func (v *refusingValue) Set(s string) error {
	err := v.Value.Set(s)
	if err != nil && *v.refused == nil {
		v.value, *v.refused = s, v
	}
	return err
}

// IsBoolFlag keeps a boolean flag one that takes no value of its own.
func (v *refusingValue) IsBoolFlag() bool {
	b, ok := v.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// wanted says what a flag that refused a value wants.
func wanted(v *refusingValue, flags []cli.Flag) string {
	if v.IsBoolFlag() {
		return "want true or false"
	}
	for _, f := range flags {
		if _, ok := f.(*cli.DurationFlag); ok && slices.Contains(f.Names(), v.name) {
			return "want a duration such as 3s or 500ms"
		}
	}
	return "not a value of this flag's type"
}

func dashed(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

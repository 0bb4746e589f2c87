package main

import (
	"github.com/urfave/cli/v2"
)

// The words a user types before "--" (help, version, probe, and the
// debugging subcommands) are cli commands: a command line with no
// command and no agent stays the proxy's (a usage error today, a
// conductor's component tomorrow, rule K1), and everything after "--" is
// the agent's argv, even "-- help" (see splitAgentArgv).

// helpCommand is `acp-normalize help [COMMAND]`.
func helpCommand() *cli.Command {
	return &cli.Command{
		Name:      "help",
		Usage:     "show the help of acp-normalize or of a command",
		ArgsUsage: "[COMMAND]",
		Action: func(c *cli.Context) error {
			switch c.NArg() {
			case 0:
				return cli.ShowAppHelp(c)
			case 1:
				name := c.Args().First()
				if c.App.Command(name) == nil {
					return usageError("help: no command %q (see acp-normalize --help)", name)
				}
				return cli.ShowCommandHelp(c.Lineage()[1], name) // the app's context: its commands
			}
			return usageError("help: give at most one command")
		},
	}
}

// oneLineUsageErrors makes a bad flag of any command one line on stderr
// and exit status 2, as at the top level, instead of the command's help
// followed by the error.
func oneLineUsageErrors(cmds []*cli.Command) {
	for _, cmd := range cmds {
		name := cmd.Name
		cmd.OnUsageError = func(_ *cli.Context, err error, _ bool) error {
			return usageError("%s: %v (see acp-normalize %s --help)", name, err, name)
		}
		oneLineUsageErrors(cmd.Subcommands)
	}
}

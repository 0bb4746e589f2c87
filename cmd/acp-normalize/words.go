package main

import (
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
		cmd.OnUsageError = func(_ *cli.Context, err error, _ bool) error {
			return usageError("%s: %v (see acp-normalize %s --help)", name, err, name)
		}
		cmd.Subcommands = append([]*cli.Command(nil), cmd.Subcommands...)
		oneLineUsageErrors(cmd.Subcommands)
		cmds[i] = &cmd
	}
}

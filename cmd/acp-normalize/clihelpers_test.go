package main

import "github.com/urfave/cli/v2"

// cliCommandNamed is a do-nothing subcommand for argument-splitting tests.
func cliCommandNamed(name string) *cli.Command {
	return &cli.Command{Name: name, Action: func(*cli.Context) error { return nil }}
}

package main

import (
	"embed"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"
)

// The long help of each subcommand, as --help prints it: help/NAME.txt is
// the line "acp-normalize NAME ARGS", the one-line usage, a blank line,
// then the description. Kept as text so that it reads as the user sees it.
//
//go:embed help/*.txt
var helpFiles embed.FS

// helpCommand is the subcommand name with its help from help/NAME.txt,
// its action (given the streams) and flags. A missing or malformed help file is a build mistake
// (every test that builds the app panics on it).
func helpCommand(st streams, name string, action func(*cli.Context, streams) error, flags ...cli.Flag) *cli.Command {
	b, err := helpFiles.ReadFile("help/" + name + ".txt")
	if err != nil {
		panic(err)
	}
	synopsis, rest, _ := strings.Cut(string(b), "\n")
	usage, description, ok := strings.Cut(rest, "\n\n")
	args, named := strings.CutPrefix(synopsis, "acp-normalize "+name+" ")
	if !ok || !named {
		panic(fmt.Sprintf("help/%s.txt: want \"acp-normalize %s ARGS\", the usage line, a blank line, the description", name, name))
	}
	return &cli.Command{
		Name:        name,
		Usage:       usage,
		ArgsUsage:   args,
		Description: strings.TrimSuffix(description, "\n"),
		Flags:       flags,
		Action:      func(c *cli.Context) error { return action(c, st) },
	}
}

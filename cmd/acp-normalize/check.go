package main

import (
	"bufio"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/acp-normalize/acp-normalize/check"
	"github.com/acp-normalize/acp-normalize/route"
)

// checkCommand is `acp-normalize check`: which frames of a session break
// the protocol, and whose fault it is.
func checkCommand(st streams) *cli.Command {
	return helpCommand(st, "check", checkAction,
		&cli.BoolFlag{Name: "json", Usage: "one JSON object per file (findings with side, method, path, message, count, firstLine, example) for tools"},
		&cli.StringFlag{Name: "modules", Value: "all", EnvVars: []string{"ACP_NORMALIZE_MODULES"}, DefaultText: "as recorded, else all",
			Usage: "the modules whose output is checked too: all, none, or a comma-separated list"},
		&cli.StringFlag{Name: "fail-on", Value: "broken",
			Usage: "exit 1 for findings at this level or above: broken (the receiver gets the problem), repaired (any finding, those acp-normalize repairs included) or none"},
	)
}

// checkAction checks each file named on the command line.
func checkAction(c *cli.Context, st streams) error {
	// The flags first: a mistyped level is the mistake to report, not
	// the file named after it.
	failOn, err := failOnLevel(c.String("fail-on"))
	if err != nil {
		return usageError("%v", err)
	}
	settings, err := explicitSettings(c)
	if err != nil {
		return err
	}
	files, err := captureNames(c, "check", "no file given; usage: acp-normalize check [--json] [--fail-on LEVEL] FILE...")
	if err != nil {
		return err
	}
	out := bufio.NewWriterSize(st.stdout, 64<<10)
	chk := check.New(out, c.Bool("json"), allModules()...)
	r := failingWrites{chk}
	logger := replayLogger(st.stderr, slog.LevelError, os.Getenv)
	failures := 0
	for _, name := range files {
		n, err := replayFile(name, st, r, out, func(start *route.Step) (route.RouterConfig, error) {
			mods, options, nonJSON, _ := settings.resolve(start)
			return route.RouterConfig{Modules: mods, Settings: options, Logger: logger.With("capture", name), Version: version, NonJSON: nonJSON}, nil
		})
		failures += n
		if err != nil {
			_ = out.Flush()
			return &exitError{code: exitFailure, err: err}
		}
	}
	if err := out.Flush(); err != nil {
		return &exitError{code: exitFailure, err: fmt.Errorf("writing output: %w", err)}
	}
	var wrong []string
	if n := chk.AtLeast(failOn); failOn != 0 && n > 0 {
		problems := fmt.Sprintf("%d problem(s)", n)
		if failOn == check.Broken {
			problems += " the receiver gets"
		}
		if below := chk.Problems() - n; below > 0 {
			problems += fmt.Sprintf(" (and %d acp-normalize repairs)", below)
		}
		wrong = append(wrong, problems)
	}
	if failures > 0 {
		wrong = append(wrong, fmt.Sprintf("%d bad line(s) or file(s) not checked", failures))
	}
	if n := chk.Empty(); n > 0 {
		wrong = append(wrong, fmt.Sprintf("%d file(s) with no frames: nothing checked", n))
	}
	if len(wrong) > 0 {
		return &exitError{code: exitFailure, err: fmt.Errorf("check: %s", strings.Join(wrong, "; "))}
	}
	return nil
}

// failOnLevel reads --fail-on: a level of check.Checker, or "none" (0:
// no finding fails the check; unreadable lines and files still do).
func failOnLevel(name string) (check.Level, error) {
	if name == "none" {
		return 0, nil
	}
	l, err := check.ParseLevel(name)
	if err != nil {
		return 0, fmt.Errorf("--fail-on must be broken, repaired or none, not %q", name)
	}
	return l, nil
}

package main

import (
	"bufio"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/acp-normalize/acp-normalize/route"
	"github.com/acp-normalize/acp-normalize/timeline"
)

// checkCommand is `acp-normalize check`: which frames of a session break
// the protocol, and whose fault it is.
func checkCommand(st streams) *cli.Command {
	return helpCommand(st, "check", checkAction,
		&cli.BoolFlag{Name: "json", Usage: "one JSON object per file (findings with side, method, path, message, count, firstLine, example) for tools"},
		&cli.StringFlag{Name: "modules", Value: "all", EnvVars: []string{"ACP_NORMALIZE_MODULES"}, DefaultText: "as recorded, else all",
			Usage: "the modules whose output is checked too: all, none, or a comma-separated list"},
	)
}

// checkAction checks each file named on the command line.
func checkAction(c *cli.Context, st streams) error {
	files, err := captureNames(c, "check", "no file given; usage: acp-normalize check [--json] FILE...")
	if err != nil {
		return err
	}
	settings, err := explicitSettings(c)
	if err != nil {
		return err
	}
	out := bufio.NewWriterSize(st.stdout, 64<<10)
	chk := timeline.NewCheck(out, c.Bool("json"), allModules()...)
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
	if n := chk.Problems(); n > 0 {
		wrong = append(wrong, fmt.Sprintf("%d problem(s)", n))
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

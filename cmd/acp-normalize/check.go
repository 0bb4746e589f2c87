package main

import (
	"bufio"
	"errors"
	"fmt"
	"log/slog"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/acp-normalize/acp-normalize/proxy"
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
	files := c.Args().Slice()
	if len(files) == 0 {
		return usageError("check: no file given; usage: acp-normalize check [--json] FILE...")
	}
	for _, name := range files {
		if name == "-" {
			continue
		}
		if _, err := os.Stat(name); err != nil {
			return usageError("check: %s: %v", name, errors.Unwrap(err))
		}
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
		n, err := replayFile(name, st, r, out, func(start *proxy.Step) (proxy.RouterConfig, error) {
			mods, options, nonJSON, _ := settings.resolve(start)
			return proxy.RouterConfig{Modules: mods, Settings: options, Logger: logger.With("capture", name), Version: version, NonJSON: nonJSON}, nil
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
	switch {
	case chk.Problems() > 0 && failures > 0:
		return &exitError{code: exitFailure, err: fmt.Errorf("check: %d problem(s); %d bad line(s) or file(s) not checked", chk.Problems(), failures)}
	case chk.Problems() > 0:
		return &exitError{code: exitFailure, err: fmt.Errorf("check: %d problem(s)", chk.Problems())}
	case failures > 0:
		return &exitError{code: exitFailure, err: fmt.Errorf("check: %d bad line(s) or file(s) not checked", failures)}
	}
	return nil
}

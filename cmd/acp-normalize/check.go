package main

import (
	"bufio"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/acp-normalize/acp-normalize/proxy"
	"github.com/acp-normalize/acp-normalize/timeline"
)

// checkCommand is `acp-normalize check`: which frames of a session break
// the protocol, and whose fault it is.
func checkCommand(st streams) *cli.Command {
	return &cli.Command{
		Name:      "check",
		Usage:     "check every frame of a capture or trace against the ACP schema and the known vendor breakage",
		ArgsUsage: "FILE...",
		Description: "Replays each capture (or acp-inspector trace) as `replay` does and checks\n" +
			"every frame each side sent, and every frame acp-normalize wrote, against the\n" +
			"ACP schema of the negotiated protocol version (built in; the unstable schema\n" +
			"only for the shapes only it has), plus what the contract names as vendor\n" +
			"breakage: methods that are neither ACP's nor \"_\"-prefixed (V7), the draft\n" +
			"subagent dialect (S6), subagent sessions sent to a client that did not opt\n" +
			"in (S0), request ids the receiver would reject, frames about a session the\n" +
			"client does not know, updates of a tool call never announced, lines that are\n" +
			"not JSON (F2).\n" +
			"Problems are grouped by sender, method and JSON path, with a count, the first\n" +
			"frame and whether acp-normalize repairs them. Exit status: 0 when every file is\n" +
			"clean, 1 when anything is wrong (or a line or file cannot be read), 2 for a\n" +
			"usage mistake.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "json", Usage: "one JSON object per file (findings with side, method, path, message, count, firstLine, example) for tools"},
			&cli.StringFlag{Name: "modules", Value: "all", EnvVars: []string{"ACP_NORMALIZE_MODULES"}, DefaultText: "as recorded, else all",
				Usage: "the modules whose output is checked too: all, none, or a comma-separated list"},
		},
		Action: func(c *cli.Context) error { return checkAction(c, st) },
	}
}

// checkAction checks each file named on the command line.
func checkAction(c *cli.Context, st streams) error {
	files := c.Args().Slice()
	if len(files) == 0 {
		return usageError("check: no file given; usage: acp-normalize check [--json] FILE...")
	}
	if err := checkCaptureNames("check", files...); err != nil {
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

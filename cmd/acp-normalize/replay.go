package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/lmittmann/tint"

	"github.com/urfave/cli/v2"

	"github.com/acp-normalize/acp-normalize/proxy"
	"github.com/acp-normalize/acp-normalize/timeline"
)

// replayCommand is `acp-normalize replay` (rule R3).
func replayCommand(st streams) *cli.Command {
	return &cli.Command{
		Name:      "replay",
		Usage:     "run recorded captures through the modules and print what each side would have received",
		ArgsUsage: "CAPTURE...",
		Description: "Reads captures written by --record (or Kandev acpdbg captures, or\n" +
			"{\"from\":...,\"frame\":...} lines), replays their input records through the\n" +
			"chosen modules without starting a process, and prints what each side would\n" +
			"have received. Each CAPTURE is its own connection; \"-\" reads stdin.\n" +
			"A bad line is reported on stderr as FILE:LINE: message, the rest is replayed,\n" +
			"and the exit status is 1.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "modules", Value: "all", EnvVars: []string{"ACP_NORMALIZE_MODULES"},
				Usage: "vendor modules to apply: all, none, or a comma-separated list"},
			&cli.StringFlag{Name: "format", Value: "jsonl",
				Usage: "jsonl ({\"to\":...,\"frame\":...} lines) or pretty (a timeline for humans)"},
			&cli.BoolFlag{Name: "diff",
				Usage: "show only what normalization changed, next to the input that caused it"},
			&cli.StringFlag{Name: "color", Value: "auto",
				Usage: "colour the pretty and diff output: auto (on a terminal, unless NO_COLOR or TERM=dumb), always, never"},
			&cli.StringFlag{Name: "non-json", Value: "drop",
				Usage: "what to do with lines that are not JSON: drop or forward (as the proxy's flag)"},
			&cli.StringFlag{Name: "log-level", Value: "warn",
				Usage: "log level of module messages on stderr: debug, info, warn or error"},
		},
		Action: func(c *cli.Context) error { return replayAction(c, st) },
	}
}

// replayAction replays each capture named on the command line.
func replayAction(c *cli.Context, st streams) error {
	files := c.Args().Slice()
	if len(files) == 0 {
		return usageError("replay: no capture given; usage: acp-normalize replay [flags] CAPTURE...")
	}
	mods, err := selectModules(allModules(moduleOptionsFrom(c)), c.String("modules"))
	if err != nil {
		return usageError("--modules: %v", err)
	}
	nonJSON, err := proxy.ParseNonJSONPolicy(c.String("non-json"))
	if err != nil {
		return usageError("%v", err)
	}
	level, err := parseLevel(c.String("log-level"))
	if err != nil {
		return usageError("%v", err)
	}
	color, err := colorMode(c.String("color"), st.stdout, os.Getenv)
	if err != nil {
		return usageError("%v", err)
	}
	out := bufio.NewWriterSize(st.stdout, 64<<10)
	r, err := newRenderer(c.String("format"), c.Bool("diff"), out, timeline.Options{Color: color})
	if err != nil {
		return usageError("%v", err)
	}
	logger := replayLogger(st.stderr, level, os.Getenv)
	failures := 0
	for _, name := range files {
		n, err := replayFile(name, st, r, out, proxy.RouterConfig{
			Modules: mods,
			Logger:  logger.With("capture", name),
			Version: version,
			NonJSON: nonJSON,
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
	if failures > 0 {
		return &exitError{code: exitFailure, err: fmt.Errorf("replay: %d bad capture line(s) or file(s) skipped", failures)}
	}
	return nil
}

// maxReportedLines is how many bad lines of one capture are reported
// one by one (a replay output given by mistake would repeat one message
// on every line).
const maxReportedLines = 10

// replayFile replays one capture and returns how many of its lines (or
// the file itself) could not be read. The error is a failure to write.
func replayFile(name string, st streams, r timeline.Renderer, out *bufio.Writer, cfg proxy.RouterConfig) (int, error) {
	var in io.Reader = st.stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			_ = out.Flush()
			fmt.Fprintf(st.stderr, "%s: %v\n", name, errors.Unwrap(err))
			return 1, nil
		}
		defer f.Close()
		in = f
	}
	if err := r.Begin(name); err != nil {
		return 0, err
	}
	bad := 0
	var readErr error
	err := proxy.Replay(in, cfg, func(s *proxy.Step) error {
		if s.Kind == proxy.StepError {
			bad++
			if bad <= maxReportedLines {
				_ = out.Flush() // keep stdout and stderr in order on a terminal
				fmt.Fprintf(st.stderr, "%s:%d: %v\n", name, s.Line, s.Err)
			}
			return nil
		}
		return r.Step(s)
	})
	var writeErr *writeError
	switch {
	case errors.As(err, &writeErr):
		return bad, err
	case err != nil:
		readErr = err
	}
	if err := r.End(); err != nil {
		return bad, err
	}
	if bad > maxReportedLines {
		_ = out.Flush()
		fmt.Fprintf(st.stderr, "%s: %d more bad lines not shown\n", name, bad-maxReportedLines)
	}
	if readErr != nil {
		_ = out.Flush()
		fmt.Fprintf(st.stderr, "%s: %v\n", name, readErr)
		bad++
	}
	return bad, nil
}

// writeError marks an error writing the output, which ends the replay.
type writeError struct{ err error }

func (e *writeError) Error() string { return "writing output: " + e.err.Error() }
func (e *writeError) Unwrap() error { return e.err }

// failingWrites adapts a Renderer so that its errors are writeErrors.
type failingWrites struct{ timeline.Renderer }

func (f failingWrites) Begin(name string) error { return wrapWrite(f.Renderer.Begin(name)) }
func (f failingWrites) Step(s *proxy.Step) error {
	return wrapWrite(f.Renderer.Step(s))
}
func (f failingWrites) End() error { return wrapWrite(f.Renderer.End()) }

func wrapWrite(err error) error {
	if err == nil {
		return nil
	}
	return &writeError{err: err}
}

// newRenderer picks the renderer for --format and --diff.
func newRenderer(format string, diff bool, w io.Writer, opts timeline.Options) (timeline.Renderer, error) {
	var r timeline.Renderer
	switch {
	case format == "jsonl" && diff:
		r = timeline.NewDiffJSONL(w)
	case format == "jsonl":
		r = timeline.NewJSONL(w)
	case format == "pretty" && diff:
		r = timeline.NewDiff(w, opts)
	case format == "pretty":
		r = timeline.NewPretty(w, opts)
	default:
		return nil, fmt.Errorf("--format must be jsonl or pretty, not %q", format)
	}
	return failingWrites{r}, nil
}

// replayLogger logs module messages without timestamps: the time of a
// replay says nothing about the session.
func replayLogger(stderr io.Writer, level slog.Level, getenv func(string) string) *slog.Logger {
	return slog.New(tint.NewHandler(stderr, &tint.Options{
		Level:   level,
		NoColor: !useColor(stderr, getenv),
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if len(groups) == 0 && a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		},
	}))
}

// colorMode resolves --color: auto colours only a terminal, and not
// under NO_COLOR or TERM=dumb.
func colorMode(mode string, w io.Writer, getenv func(string) string) (bool, error) {
	switch mode {
	case "auto":
		return useColor(w, getenv), nil
	case "always":
		return true, nil
	case "never":
		return false, nil
	}
	return false, fmt.Errorf("--color must be auto, always or never, not %q", mode)
}

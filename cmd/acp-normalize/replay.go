package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"slices"
	"strings"

	"github.com/lmittmann/tint"

	"github.com/urfave/cli/v2"

	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/route"
	"github.com/acp-normalize/acp-normalize/timeline"
)

// replayCommand is `acp-normalize replay` (rule R3).
func replayCommand(st streams) *cli.Command {
	flags := []cli.Flag{
		&cli.StringFlag{Name: "modules", Value: "all", EnvVars: []string{"ACP_NORMALIZE_MODULES"}, DefaultText: "as recorded, else all",
			Usage: modulesUsage()},
		&cli.StringFlag{Name: "format", Value: "jsonl",
			Usage: "jsonl ({\"to\":...,\"frame\":...} lines), pretty (a timeline for humans) or html (a self-contained page to open in a browser)"},
		&cli.BoolFlag{Name: "diff",
			Usage: "show only what normalization changed, next to the input that caused it"},
		&cli.StringFlag{Name: "color", Value: "auto",
			Usage: "colour the pretty and diff output: auto (on a terminal, unless NO_COLOR or TERM=dumb), always, never"},
		&cli.StringFlag{Name: "non-json", Value: "drop", DefaultText: "as recorded, else drop",
			Usage: "what to do with lines that are not JSON: drop or forward (as the proxy's flag)"},
		&cli.StringFlag{Name: "log-level", Value: "warn",
			Usage: "log level of module messages on stderr: debug, info, warn or error"},
	}
	return helpCommand(st, "replay", replayAction,
		append(flags, optionFlags(moduleOptions(), false)...)...)
}

// replayAction replays each capture named on the command line.
func replayAction(c *cli.Context, st streams) error {
	files, err := captureNames(c, "replay", "no capture given; usage: acp-normalize replay [flags] CAPTURE...")
	if err != nil {
		return err
	}
	settings, err := explicitSettings(c)
	if err != nil {
		return err
	}
	level, err := parseLevel(c.String("log-level"))
	if err != nil {
		return usageError("%v", err)
	}
	color, err := colorMode(c.String("color"), st.stdout, os.Getenv)
	if err != nil {
		return usageError("%v", err)
	}
	// The pretty and diff views escape for the terminal as they render;
	// JSON lines are escaped on the way, on a terminal only.
	stdout, flushStdout := io.Writer(st.stdout), func() error { return nil }
	switch c.String("format") {
	case "jsonl":
		stdout, flushStdout = jsonlOut(st.stdout)
	case "html":
		if onTerminal(st.stdout) {
			// A page holds the frames' bytes as they are (for the
			// browser), and no one reads 40 KB of page on a terminal.
			return usageError("--format html writes a page for a browser, not for a terminal: redirect it to a file (> session.html) and open that")
		}
	}
	out := bufio.NewWriterSize(stdout, 64<<10)
	r, err := newRenderer(c.String("format"), c.Bool("diff"), out, timeline.Options{Color: color, Modules: allModules()})
	if err != nil {
		return usageError("%v", err)
	}
	logger := replayLogger(st.stderr, level, os.Getenv)
	failures := 0
	for _, name := range files {
		capLogger := logger.With("capture", name)
		n, err := replayFile(name, st, r, out, func(start *route.Step) (route.RouterConfig, error) {
			mods, options, nonJSON, warnings := settings.resolve(start)
			if len(warnings) > 0 {
				_ = out.Flush() // keep stdout and stderr in order on a terminal
				for _, w := range warnings {
					printLine(st.stderr, "%s: %s", name, w)
				}
			}
			return route.RouterConfig{Modules: mods, Settings: options, Logger: capLogger, Version: version, NonJSON: nonJSON}, nil
		})
		failures += n
		if err != nil {
			_ = out.Flush()
			return &exitError{code: exitFailure, err: err}
		}
	}
	if err := r.Close(); err != nil {
		return &exitError{code: exitFailure, err: err}
	}
	if err := errors.Join(out.Flush(), flushStdout()); err != nil {
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

// captureNames returns the capture names on the command line of cmd: at
// least one (else the usage error says usage), each a file or "-"
// (checkCaptureNames).
func captureNames(c *cli.Context, cmd, usage string) ([]string, error) {
	names := c.Args().Slice()
	if len(names) == 0 {
		return nil, usageError("%s: %s", cmd, usage)
	}
	return names, checkCaptureNames(cmd, names...)
}

// checkCaptureNames is the usage error for a capture named on the command
// line that does not exist or is a directory ("-" is stdin), found before
// anything is read or written: a mistyped name is a usage mistake, as for
// every command (exit 2), not a capture half replayed.
func checkCaptureNames(cmd string, names ...string) error {
	for _, name := range names {
		if name == "-" {
			continue
		}
		st, err := os.Stat(name)
		switch {
		case err != nil:
			hint := ""
			if strings.HasPrefix(name, "-") && errors.Is(err, fs.ErrNotExist) {
				hint = " (flags go before the capture names)"
			}
			return usageError("%s: %s: %v%s", cmd, name, errors.Unwrap(err), hint)
		case st.IsDir():
			return usageError("%s: %s: is a directory, not a capture", cmd, name)
		}
	}
	return nil
}

// replayFile replays one capture and returns how many of its lines (or
// the file itself) could not be read. The error is a failure to write.
func replayFile(name string, st streams, r timeline.Renderer, out *bufio.Writer, configure func(*route.Step) (route.RouterConfig, error)) (int, error) {
	var in io.Reader = st.stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			// It was there when the command began (checkCaptureNames).
			_ = out.Flush()
			printLine(st.stderr, "%s: %v", name, errors.Unwrap(err))
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
	err := route.ReplayWith(in, configure, func(s *route.Step) error {
		if s.Kind == route.StepError {
			bad++
			if u, ok := r.(timeline.Unreadable); ok {
				u.Unreadable(s.Line)
			}
			if bad <= maxReportedLines {
				_ = out.Flush() // keep stdout and stderr in order on a terminal
				printLine(st.stderr, "%s:%d: %v", name, s.Line, s.Err)
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
		if u, ok := r.(timeline.Unreadable); ok {
			u.Unreadable(0) // the rest of the file
		}
	}
	if err := r.End(); err != nil {
		return bad, err
	}
	if bad > maxReportedLines {
		_ = out.Flush()
		printLine(st.stderr, "%s: %d more bad lines not shown", name, bad-maxReportedLines)
	}
	if readErr != nil {
		_ = out.Flush()
		printLine(st.stderr, "%s: %v", name, readErr)
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
func (f failingWrites) Step(s *route.Step) error {
	return wrapWrite(f.Renderer.Step(s))
}
func (f failingWrites) End() error { return wrapWrite(f.Renderer.End()) }

// Unreadable passes a line that could not be read on to a renderer that
// reports it (timeline.Unreadable).
func (f failingWrites) Unreadable(line int) {
	if u, ok := f.Renderer.(timeline.Unreadable); ok {
		u.Unreadable(line)
	}
}

// Close finishes the output of renderers that write one document for all
// captures (html).
func (f failingWrites) Close() error {
	if c, ok := f.Renderer.(io.Closer); ok {
		return wrapWrite(c.Close())
	}
	return nil
}

func wrapWrite(err error) error {
	if err == nil {
		return nil
	}
	return &writeError{err: err}
}

// newRenderer picks the renderer for --format and --diff.
func newRenderer(format string, diff bool, w io.Writer, opts timeline.Options) (failingWrites, error) {
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
	case format == "html" && diff:
		return failingWrites{}, errors.New("--diff goes with --format jsonl or pretty; the html viewer has its own \"only what the proxy changed\" filter")
	case format == "html":
		r = timeline.NewHTML(w, opts)
	default:
		return failingWrites{}, fmt.Errorf("--format must be jsonl, pretty or html, not %q", format)
	}
	return failingWrites{r}, nil
}

// replayLogger logs module messages without timestamps: the time of a
// replay says nothing about the session.
func replayLogger(stderr io.Writer, level slog.Level, getenv func(string) string) *slog.Logger {
	color := useColor(stderr, getenv)
	return slog.New(tint.NewTextHandler(stderr, &tint.Options{
		Level:   level,
		NoColor: !color,
		ReplaceAttr: terminalAttrs(func(groups []string, a slog.Attr) slog.Attr {
			if len(groups) == 0 && a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		}),
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

// replaySettings are the settings given on the command line; what is not
// given comes from each capture's start event.
type replaySettings struct {
	modules    string // --modules, "" when not given
	nonJSON    route.NonJSONPolicy
	nonJSONSet bool
	// options holds the module options given, by name.
	options rewrite.Settings
}

// explicitSettings reads the settings given on the command line, before
// or after "replay" (the nearest wins), and checks them.
func explicitSettings(c *cli.Context) (replaySettings, error) {
	rs := replaySettings{options: optionSettings(c, moduleOptions())}
	if err := checkVendor(allModules(), rs.options); err != nil {
		return rs, usageError("--vendor: %v", err)
	}
	if err := rewrite.CheckClientSettings(rs.options); err != nil {
		return rs, usageError("%v", err)
	}
	if err := rewrite.CheckChoices(moduleOptions(), rs.options); err != nil {
		return rs, usageError("%v", err)
	}
	if lc := setIn(c, "modules"); lc != nil {
		rs.modules = lc.String("modules")
		if _, err := selectModules(allModules(), rs.modules); err != nil {
			return rs, usageError("--modules: %v", err)
		}
		if strings.TrimSpace(rs.modules) == "" {
			rs.modules = "all"
		}
	}
	if lc := setIn(c, "non-json"); lc != nil {
		p, err := route.ParseNonJSONPolicy(lc.String("non-json"))
		if err != nil {
			return rs, usageError("%v", err)
		}
		rs.nonJSON, rs.nonJSONSet = p, true
	}
	return rs, nil
}

// resolve chooses one capture's modules, option settings and non-JSON
// policy: a setting given on the command line, else the one recorded in
// its start event (start may be nil), else the default (all modules,
// drop, flags off). It returns a warning for each recorded setting this
// binary lacks.
func (rs replaySettings) resolve(start *route.Step) ([]rewrite.Module, rewrite.Settings, route.NonJSONPolicy, []string) {
	var warnings []string
	settings := rewrite.Settings{}
	if start != nil {
		var unknown []string
		settings, unknown = rewrite.ParseRecorded(start.Options, moduleOptions())
		for _, o := range unknown {
			warnings = append(warnings, fmt.Sprintf("recorded option %q is unknown to this acp-normalize; replaying without it", o))
		}
	}
	for name, v := range rs.options {
		settings[name] = v
	}
	all := allModules()

	var mods []rewrite.Module
	switch {
	case rs.modules != "":
		mods, _ = selectModules(all, rs.modules) // checked by explicitSettings
	case start != nil && start.Modules != nil:
		for _, name := range start.Modules {
			i := slices.IndexFunc(all, func(m rewrite.Module) bool { return m.Name == name })
			if i < 0 {
				warnings = append(warnings, fmt.Sprintf("recorded module %q is unknown to this acp-normalize; replaying without it", name))
				continue
			}
			if !slices.ContainsFunc(mods, func(m rewrite.Module) bool { return m.Name == name }) {
				mods = append(mods, all[i])
			}
		}
		if mods == nil {
			mods = []rewrite.Module{}
		}
	default:
		mods = all
	}

	nonJSON := route.DropNonJSON
	switch {
	case rs.nonJSONSet:
		nonJSON = rs.nonJSON
	case start != nil && start.Policy != "":
		p, err := route.ParseNonJSONPolicy(start.Policy)
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("recorded nonJSON %q is unknown to this acp-normalize; replaying with drop", start.Policy))
		} else {
			nonJSON = p
		}
	}
	return mods, settings, nonJSON, warnings
}

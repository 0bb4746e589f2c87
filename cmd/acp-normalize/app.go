package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/proxy"
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/rewrite/table"
	"github.com/acp-normalize/acp-normalize/route"
)

// Exit codes of the proxy itself; otherwise it exits with the agent's code.
const (
	exitFailure = 1
	exitUsage   = 2
)

// stderrQueueBytes bounds what waits for a slow stderr (F4): more than
// the longest agent stderr line the proxy passes on in one piece (1 MiB).
const stderrQueueBytes = 4 << 20

// exitError carries an exit code out of an action.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func usageError(format string, args ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf(format, args...)}
}

// streams are the process's standard streams, injectable for tests.
type streams struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	// ownProcess is set when the command runs as the process's main: it
	// may then set process-wide runtime settings (the memory limit).
	ownProcess bool
}

// run is main without os.Exit: it parses args and returns the exit code.
// It leaves the process's runtime settings alone (tests run it in theirs).
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return runStreams(args, streams{stdin: stdin, stdout: stdout, stderr: stderr})
}

// runMain is run as the process's main.
func runMain(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return runStreams(args, streams{stdin: stdin, stdout: stdout, stderr: stderr, ownProcess: true})
}

func runStreams(args []string, st streams) int {
	stderr := st.stderr
	app := newApp(st)
	cliArgs, agentArgv, hasAgent := splitAgentArgv(args, app)
	app.OnUsageError = func(c *cli.Context, err error, _ bool) error {
		return usageError("%v (see acp-normalize --help)", flagMistake(cliArgs[1:], c.App.Flags, err))
	}
	noTopic := ""
	app.CommandNotFound = func(_ *cli.Context, name string) { noTopic = name } // "help NAME" of no command
	var code int
	app.Action = func(c *cli.Context) error {
		argv := agentArgv
		if !hasAgent {
			argv = c.Args().Slice()
		}
		if c.Bool("version") {
			return printVersion(st.stdout)
		}
		var err error
		code, err = proxyAction(c, st, argv)
		if !hasAgent && len(argv) > 0 && errors.Is(err, exec.ErrNotFound) {
			// No "--": the word may be a mistyped command.
			err = usageError("%v; nor is it a command (%s; see acp-normalize --help)", err, commandNames(app))
		}
		return err
	}
	err := app.Run(cliArgs)
	if err == nil && noTopic != "" {
		err = usageError("help: no command '%s' (%s)", noTopic, commandNames(app))
	}
	if err == nil {
		return code
	}
	printLine(stderr, "acp-normalize: %v", err)
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return exitUsage // errors from flag parsing
}

// commandNames lists the commands, as --help does.
func commandNames(app *cli.App) string {
	var names []string
	for _, c := range app.Commands {
		names = append(names, c.Name)
	}
	return strings.Join(names, ", ")
}

// splitAgentArgv separates the agent's argv (everything after the first
// "--") from the proxy's own arguments, so that an agent named like a
// subcommand ("-- help", "-- replay x") or with flags of its own is never
// read by the CLI parser. When a subcommand comes before "--", the
// arguments are left to that subcommand.
func splitAgentArgv(args []string, app *cli.App) (cliArgs, agent []string, ok bool) {
	i := slices.Index(args, "--")
	if i < 0 {
		return args, nil, false
	}
	for _, a := range args[1:i] {
		if app.Command(a) != nil {
			return args, nil, false
		}
	}
	return args[:i], args[i+1:], true
}

func newApp(st streams) *cli.App {
	app := &cli.App{
		Name:      "acp-normalize",
		Usage:     "repair vendor deviations in Agent Client Protocol (ACP) stdio traffic",
		UsageText: "acp-normalize [flags] -- AGENT [ARGS...]\nacp-normalize [flags]   (in a conductor's proxy slot: no agent command)\nacp-normalize command [flags] [args]",
		Description: "Put acp-normalize in front of an ACP agent in your editor's agent config:\n" +
			"every frame is relayed byte for byte, except where a vendor module repairs it.\n" +
			"stdout carries protocol frames only; logs go to stderr and --log-file.",
		Reader:         st.stdin,
		Writer:         st.stdout,
		ErrWriter:      st.stderr,
		ExitErrHandler: func(*cli.Context, error) {}, // run maps errors to exit codes
		// OnUsageError is runStreams's: it needs the arguments.
		Commands: []*cli.Command{probeCommand(st), replayCommand(st), exportCommand(st), checkCommand(st), mockAgentCommand(st), versionCommand(st), helpWord()},
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "modules", Value: "all", EnvVars: []string{"ACP_NORMALIZE_MODULES"},
				Usage: modulesUsage()},
			&cli.StringFlag{Name: "record", EnvVars: []string{"ACP_NORMALIZE_RECORD"}, TakesFile: true,
				Usage: "record the session to `FILE` (JSONL capture, mode 0600, secrets redacted)"},
			&cli.BoolFlag{Name: "record-raw", EnvVars: []string{"ACP_NORMALIZE_RECORD_RAW"},
				Usage: "do not redact secrets in the recording"},
			&cli.StringFlag{Name: "log-level", Value: "warn", EnvVars: []string{"ACP_NORMALIZE_LOG_LEVEL"},
				Usage: "debug, info, warn or error"},
			&cli.StringFlag{Name: "log-file", EnvVars: []string{"ACP_NORMALIZE_LOG_FILE"}, TakesFile: true,
				Usage: "also write logs and the agent's stderr to `FILE` (appended)"},
			&cli.StringFlag{Name: "non-json", Value: "drop", EnvVars: []string{"ACP_NORMALIZE_NON_JSON"},
				Usage: "what to do with lines that are not JSON: drop (log and record them) or forward"},
			&cli.DurationFlag{Name: "kill-grace", Value: proxy.DefaultKillGrace, EnvVars: []string{"ACP_NORMALIZE_KILL_GRACE"},
				Usage: "how long the agent gets to exit after stdin closes, and again after SIGTERM"},
			versionFlag(),
		}, append(optionFlags(moduleOptions(), true),
			// urfave adds it only to an app without a help command.
			cli.HelpFlag)...),
	}
	oneLineUsageErrors(app)
	return app
}

// proxyAction runs the proxy in front of argv or, with no agent command,
// as a conductor's proxy component (rule K1).
func proxyAction(c *cli.Context, st streams, argv []string) (int, error) {
	if len(argv) == 0 && isTerminal(st.stdin) {
		// A person at a terminal, not a conductor: say how to use it.
		return exitUsage, usageError("no agent command given; usage: acp-normalize [flags] -- AGENT [ARGS...]" +
			" (with no agent command it is a conductor's proxy component and reads the conductor's frames on stdin)")
	}
	level, err := parseLevel(c.String("log-level"))
	if err != nil {
		return exitUsage, usageError("%v", err)
	}
	nonJSON, err := route.ParseNonJSONPolicy(c.String("non-json"))
	if err != nil {
		return exitUsage, usageError("%v", err)
	}
	if c.Duration("kill-grace") <= 0 {
		return exitUsage, usageError("--kill-grace must be positive")
	}
	settings := optionSettings(c, moduleOptions())
	if err := checkVendor(allModules(), settings); err != nil {
		return exitUsage, usageError("--vendor: %v", err)
	}
	if err := rewrite.CheckClientSettings(settings); err != nil {
		return exitUsage, usageError("%v", err)
	}
	if err := rewrite.CheckChoices(moduleOptions(), settings); err != nil {
		return exitUsage, usageError("%v", err)
	}
	mods, err := selectModules(allModules(), c.String("modules"))
	if err != nil {
		return exitUsage, usageError("--modules: %v", err)
	}
	if len(argv) == 0 {
		// Component mode: the conductor reaches the agent.
	} else if _, err := exec.LookPath(argv[0]); err != nil {
		if errors.Is(err, exec.ErrNotFound) {
			return exitUsage, usageError("agent %q not found: %w", argv[0], errors.Unwrap(err))
		}
		return exitUsage, usageError("cannot run agent %q: %v", argv[0], errors.Unwrap(err))
	}

	var logFile *logFileOut
	if path := c.String("log-file"); path != "" {
		logFile, err = openLogFile(path, asFile(st.stdin), asFile(st.stdout))
		if err != nil {
			return exitUsage, usageError("--log-file: %v", err)
		}
	}
	var logOut io.Writer
	if logFile != nil {
		logOut = logFile.w
	}
	// Logs and the agent's stderr reach stderr through a bounded queue: a
	// stderr nobody reads must stall neither the relays nor the agent
	// (F4). The log file is written directly and gets every line.
	logStderr := newBackgroundWriter(st.stderr, stderrQueueBytes)
	logger := newLogger(st.stderr, logStderr, logOut, level, os.Getenv)
	// On a terminal the agent's stderr lines are escaped like everything
	// else the proxy prints there; the log file keeps them as written.
	agentStderr, flushAgentStderr := agentStderrOut(st.stderr, logStderr)
	defer flushAgentStderr()
	defer func() {
		if logFile != nil && logFile.bg != nil {
			// A FIFO or device is waited for a second at most, as stderr;
			// what it did not take is said on stderr.
			if lost := logFile.Close(time.Second); lost.Writes > 0 || lost.Unwritten > 0 {
				logger.Warn("--log-file was not being read: lines dropped from it", "rule", "F4", "file", c.String("log-file"),
					"lines", lost.Writes, "bytes", lost.Bytes, "unwrittenAtExit", lost.Unwritten)
			}
		}
		if lost := logStderr.Close(time.Second); lost.Writes > 0 {
			// Reaches the log file when it is a regular one (stderr is
			// closed to it by now).
			logger.Warn("stderr was not being read: lines dropped from stderr", "rule", "F4",
				"lines", lost.Writes, "bytes", lost.Bytes, "logFileComplete", logFile != nil && logFile.bg == nil)
		}
		if logFile != nil && logFile.bg == nil {
			logFile.Close(0) // a regular file, written directly: last
		}
	}()

	var capture *pipe.CaptureWriter
	var captureTarget *recordTarget
	if path := c.String("record"); path != "" {
		var t *recordTarget
		var err error
		if logFile != nil && logFile.file != nil && isFile(path, logFile.file) {
			// Checked before the open, which would truncate the log.
			err = fmt.Errorf("%s %w", path, errRecordLogFile)
		} else {
			t, err = openRecord(path, asFile(st.stdin), asFile(st.stdout))
		}
		switch {
		case errors.Is(err, errRecordSymlink), errors.Is(err, errRecordStream), errors.Is(err, errRecordLogFile):
			// Recording is a debugging aid: a refused file never
			// keeps the session from starting.
			logger.Error("--record: not recording, the session runs without recording", "err", err)
		case err != nil:
			return exitUsage, usageError("--record: %v", err)
		default:
			if t.waitingForReader() {
				logger.Info("--record: the FIFO has no reader yet; the session starts now, recording when a reader opens it", "file", path)
			}
			captureTarget = t
			capture = pipe.NewCaptureWriter(t, c.Bool("record-raw"))
		}
	}

	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, proxy.ForwardedSignals()...)
	defer signal.Stop(sigs)

	// The bounded state: the modules' byte budget (P6) and, when
	// recording, the capture's queue (R1).
	bounded := int64(table.DefaultBytes)
	if capture != nil {
		bounded += pipe.DefaultCaptureQueue
	}
	if st.ownProcess {
		limitMemory(bounded, os.Getenv)
	}
	code, err := proxy.Run(proxy.Config{
		Argv: argv,
		Router: route.RouterConfig{
			Modules:  mods,
			Settings: settings,
			Logger:   logger,
			Version:  version,
			NonJSON:  nonJSON,
			Capture:  capture,
		},
		Options:     settings.Recorded(moduleOptions()),
		RecordRaw:   c.Bool("record-raw"),
		KillGrace:   c.Duration("kill-grace"),
		Stdin:       st.stdin,
		Stdout:      st.stdout,
		AgentStderr: fanout{agentStderr, logOut},
		Signals:     sigs,
		Logger:      logger,
	})
	if captureTarget != nil {
		// At exit too, the recording target is waited for only while it
		// takes bytes (R1).
		if cerr := finishCapture(capture, captureTarget, c.Duration("kill-grace")); cerr != nil {
			logger.Error("the recording is incomplete", "file", c.String("record"), "err", cerr)
			code = codeAfterLostCapture(code)
		}
		reportDropped(logger, c.String("record"), capture)
	}
	if he := (*proxy.HandshakeError)(nil); errors.As(err, &he) {
		// K3: a component without a handshake, or a handshake for a
		// proxy with an agent command.
		return exitUsage, &exitError{code: exitUsage, err: he}
	}
	if se := (*proxy.StartError)(nil); errors.As(err, &se) {
		// The agent exists but cannot be run (a bad #! line, an empty
		// file): a usage mistake, like one that is not found.
		return exitUsage, &exitError{code: exitUsage, err: se}
	}
	if err != nil {
		return exitFailure, &exitError{code: exitFailure, err: err}
	}
	return code, nil
}

// isTerminal reports whether r is a terminal.
func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// codeAfterLostCapture is the exit code when the recording was lost: a
// session that otherwise succeeded exits 1, so that a script that records
// notices; the agent's own failure code is kept.
func codeAfterLostCapture(code int) int {
	if code == 0 {
		return exitFailure
	}
	return code
}

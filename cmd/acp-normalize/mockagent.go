package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/acp-normalize/acp-normalize/mockagent"
)

// mockAgentCommand is `acp-normalize mock-agent`.
func mockAgentCommand(st streams) *cli.Command {
	return helpCommand(st, "mock-agent", mockAgentAction,
		&cli.StringFlag{Name: "log-level", Value: "warn",
			Usage: "debug, info, warn or error (logs go to stderr)"},
		&cli.BoolFlag{Name: "no-stderr",
			Usage: "do not replay the recorded agent stderr lines on stderr"},
	)
}

// mockAgentAction loads the capture and serves it on stdin/stdout. Only
// protocol frames go to stdout (rule F7 holds for the mock as well).
func mockAgentAction(c *cli.Context, st streams) error {
	if c.NArg() != 1 {
		return usageError("mock-agent: give exactly one capture; usage: acp-normalize mock-agent CAPTURE")
	}
	name := c.Args().First()
	if err := checkCaptureNames("mock-agent", name); err != nil {
		return err
	}
	level, err := parseLevel(c.String("log-level"))
	if err != nil {
		return usageError("%v", err)
	}
	logger := newLogger(st.stderr, nil, nil, level, os.Getenv).With("mock-agent", name)
	f, err := os.Open(name)
	if err != nil {
		return usageError("mock-agent: %s: %v", name, errors.Unwrap(err))
	}
	defer f.Close()
	// The modules find the answers the proxy gave the agent on the
	// editor's behalf, so the mock waits for those live too.
	script, bad, err := mockagent.LoadWith(f, logger, allModules())
	if err != nil {
		return &exitError{code: exitFailure, err: fmt.Errorf("mock-agent: %s: %w", name, err)}
	}
	if script.Frames() == 0 {
		// Nothing to serve: a file that is no capture (a README, a log)
		// gets one line, not an error per line and a silent agent.
		why := "no frames in it"
		if len(bad) > 0 {
			why = fmt.Sprintf("no frames in it, %d lines are not capture records (the first: %v)", len(bad), bad[0])
		}
		return &exitError{code: exitFailure, err: fmt.Errorf("mock-agent: %s: %s: not a capture", name, why)}
	}
	for _, b := range bad {
		var le *mockagent.LineError
		if errors.As(b, &le) {
			printLine(st.stderr, "%s:%d: %v", name, le.Line, le.Err)
		} else {
			printLine(st.stderr, "%s: %v", name, b)
		}
	}
	logger.Debug("capture loaded", "requests", script.Requests(), "frames", script.Frames(), "bad lines", len(bad))
	// A capture's frames: on a terminal (a person trying the mock by
	// hand) written with JSON escapes for what could steer it, the same
	// values; to a client, byte for byte.
	stdout, flushStdout := jsonlOut(st.stdout)
	defer flushStdout()
	cfg := mockagent.Config{Stdin: st.stdin, Stdout: stdout, Logger: logger}
	if !c.Bool("no-stderr") {
		// The recorded lines are a capture's: on a terminal, escaped as
		// replay shows them; piped (an editor), as the agent wrote them.
		stderr, flush := textOut(st.stderr)
		defer flush()
		cfg.Stderr = stderr
	}
	if err := mockagent.Serve(script, cfg); err != nil {
		return &exitError{code: exitFailure, err: fmt.Errorf("mock-agent: %w", err)}
	}
	return nil
}

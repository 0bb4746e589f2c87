package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/lmittmann/tint"
	"github.com/urfave/cli/v2"

	"github.com/acp-normalize/acp-normalize/capture/driver"
	"github.com/acp-normalize/acp-normalize/capture/fakemodel"
	"github.com/acp-normalize/acp-normalize/capture/scenario"
)

// modelURLVar is replaced by the fake model's base URL in --env values and
// --template files.
const modelURLVar = "{{MODEL_URL}}"

func main() {
	os.Exit(run(os.Args, os.Stderr))
}

func run(args []string, stderr io.Writer) int {
	app := newApp(stderr)
	if err := app.Run(args); err != nil {
		fmt.Fprintln(stderr, "acp-capture:", err)
		var ec cli.ExitCoder
		if errors.As(err, &ec) {
			return ec.ExitCode()
		}
		return 1
	}
	return 0
}

func newApp(stderr io.Writer) *cli.App {
	return &cli.App{
		Name:      "acp-capture",
		Usage:     "record a real ACP agent against a scripted fake model",
		UsageText: "acp-capture --script VENDOR/SCENARIO --out FILE --workspace DIR [flags] -- AGENT [ARGS...]",
		Writer:    stderr,
		ErrWriter: stderr,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "script", Required: true, Usage: "model script `VENDOR/SCENARIO` (capture/scenario)"},
			&cli.StringFlag{Name: "out", Required: true, Usage: "capture `FILE` to write"},
			&cli.StringFlag{Name: "workspace", Required: true, Usage: "session cwd `DIR` (absolute; fs/* is served only inside it)"},
			&cli.StringFlag{Name: "model-log", Usage: "write every model request body to `FILE` (JSONL)"},
			&cli.StringSliceFlag{Name: "env", Usage: "agent environment `KEY=VALUE` ({{MODEL_URL}} is replaced); repeatable"},
			&cli.StringSliceFlag{Name: "pass-env", Usage: "copy `NAME` from acp-capture's environment to the agent's (PATH always is); repeatable"},
			&cli.StringSliceFlag{Name: "template", Usage: "render `SRC=DST` replacing {{MODEL_URL}} before the agent starts; repeatable"},
			&cli.BoolFlag{Name: "subagents", Usage: "declare clientCapabilities.subagents:{}"},
			&cli.BoolFlag{Name: "fs", Value: true, Usage: "declare and serve fs.readTextFile and fs.writeTextFile"},
			&cli.StringFlag{Name: "mode", Usage: "send session/set_mode with this `ID` after session/new"},
			&cli.StringFlag{Name: "prompt", Usage: "prompt text (default: the script's)"},
			&cli.StringSliceFlag{Name: "answer", Usage: "answer agent request `METHOD=JSON` with that result instead of -32601; repeatable"},
			&cli.DurationFlag{Name: "cancel-after", Usage: "send session/cancel when the prompt is not answered within this time (0: never)"},
			&cli.DurationFlag{Name: "timeout", Value: 5 * time.Minute, Usage: "bound on each client request"},
			&cli.DurationFlag{Name: "linger", Value: 5 * time.Second, Usage: "quiet time after the prompt response before the agent is ended"},
			&cli.DurationFlag{Name: "linger-max", Value: 2 * time.Minute, Usage: "upper bound on lingering"},
			&cli.DurationFlag{Name: "kill-grace", Value: 3 * time.Second, Usage: "time to exit after stdin closes, and after SIGTERM"},
			&cli.StringSliceFlag{Name: "scrub", Usage: "replace `OLD=NEW` in everything recorded; repeatable"},
			&cli.StringSliceFlag{Name: "forbid", Usage: "fail if the capture contains `STRING` (added to the host name, $HOME, $USER and the current directory); repeatable"},
			&cli.StringFlag{Name: "scratch", Usage: "the run's own `DIR`: absolute paths under /tmp, /home, /root, ... elsewhere fail the capture (default: the workspace's parent)"},
			&cli.StringFlag{Name: "log-level", Value: "info", Usage: "debug, info, warn or error"},
			&cli.BoolFlag{Name: "exec", Usage: "run the command after -- as a plain program (say, acp-normalize probe -- AGENT) with the agent's environment, in the workspace, while the fake model serves; its stdout goes to --out and its exit status is ours"},
		},
		Action: record,
	}
}

func record(c *cli.Context) error {
	argv := c.Args().Slice()
	if len(argv) == 0 {
		return cli.Exit("no agent command after --", 2)
	}
	log, err := newLogger(c.App.ErrWriter, c.String("log-level"))
	if err != nil {
		return cli.Exit(err.Error(), 2)
	}
	workspace := c.String("workspace")
	if !filepath.IsAbs(workspace) {
		return cli.Exit("--workspace must be absolute", 2)
	}
	sc, err := scenario.Lookup(c.String("script"), scenario.Params{Workspace: workspace})
	if err != nil {
		return cli.Exit(err.Error(), 2)
	}
	prompt := c.String("prompt")
	if prompt == "" {
		prompt = sc.Prompt
	}
	answers, err := parseAnswers(c.StringSlice("answer"))
	if err != nil {
		return cli.Exit(err.Error(), 2)
	}
	scrub, err := parseScrub(c.StringSlice("scrub"))
	if err != nil {
		return cli.Exit(err.Error(), 2)
	}

	var modelLog io.Writer
	if path := c.String("model-log"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			return cli.Exit(fmt.Sprintf("--model-log: %v", err), 2)
		}
		defer f.Close()
		modelLog = f
	}
	model, err := fakemodel.Start(fakemodel.Options{Scenario: sc.Script, RequestLog: modelLog})
	if err != nil {
		return err
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := model.Stop(ctx); err != nil {
			log.Warn("stopping the fake model", "err", err)
		}
	}()
	log.Info("fake model listening", "url", model.URL(), "script", c.String("script"))

	for _, t := range c.StringSlice("template") {
		if err := renderTemplate(t, model.URL()); err != nil {
			return cli.Exit(err.Error(), 2)
		}
	}
	env := agentEnv(c.StringSlice("pass-env"), c.StringSlice("env"), model.URL())

	out, err := os.OpenFile(c.String("out"), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return cli.Exit(fmt.Sprintf("--out: %v", err), 2)
	}
	defer out.Close()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if c.Bool("exec") {
		return execWithModel(ctx, argv, env, workspace, out, c.App.ErrWriter)
	}
	res, runErr := driver.Run(ctx, driver.Config{
		Argv: argv, Env: env, Workspace: workspace, Capture: out,
		ClientSubagents: c.Bool("subagents"), ClientFS: c.Bool("fs"), Mode: c.String("mode"),
		Prompt: prompt, Answers: answers, CancelAfter: c.Duration("cancel-after"),
		Timeout: c.Duration("timeout"), Linger: c.Duration("linger"), LingerMax: c.Duration("linger-max"),
		KillGrace: c.Duration("kill-grace"), Scrub: scrub, Log: log,
	})
	log.Info("session recorded", "out", c.String("out"), "stopReason", res.StopReason, "exit", res.ExitCode,
		"killed", res.Killed, "agentRequests", res.AgentRequests, "modelRequests", model.Requests(),
		"rules", sc.Script.Summary())
	if err := out.Close(); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	if runErr != nil {
		return runErr
	}
	data, err := os.ReadFile(c.String("out"))
	if err != nil {
		return err
	}
	if leaks := driver.FindLeaks(data, forbidden(c.StringSlice("forbid"), workspace)); len(leaks) > 0 {
		return fmt.Errorf("the capture contains machine-specific strings %q: scrub them (--scrub) or change the setup", leaks)
	}
	scratch := c.String("scratch")
	if scratch == "" {
		scratch = filepath.Dir(workspace)
	}
	if paths := driver.FindForeignPaths(data, scratch); len(paths) > 0 {
		return fmt.Errorf("the capture names paths outside %s: %q: point the agent's directories (HOME, TMPDIR, ...) into it, or --scrub", scratch, paths)
	}
	return nil
}

// execWithModel runs argv as a plain program while the fake model serves:
// a probe of the agent, say, with the same environment a recording gets.
func execWithModel(ctx context.Context, argv, env []string, dir string, stdout, stderr io.Writer) error {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env, cmd.Dir, cmd.Stdout, cmd.Stderr = env, dir, stdout, stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return cli.Exit(fmt.Sprintf("%s exited %d", argv[0], ee.ExitCode()), ee.ExitCode())
	}
	return err
}

// forbidden lists what must not appear in a capture: the given strings,
// and the host name, user name, home and current directory of the
// recording machine (unless the workspace lies under them).
func forbidden(extra []string, workspace string) []string {
	list := append([]string(nil), extra...)
	if h, err := os.Hostname(); err == nil && len(h) > 3 {
		list = append(list, h)
	}
	for _, dir := range []string{os.Getenv("HOME"), mustGetwd()} {
		if len(dir) > 1 && !strings.HasPrefix(workspace, dir) {
			list = append(list, dir)
		}
	}
	if u := os.Getenv("USER"); len(u) > 4 {
		list = append(list, "/"+u+"/")
	}
	return list
}

func mustGetwd() string {
	wd, _ := os.Getwd()
	return wd
}

func newLogger(w io.Writer, level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	return slog.New(tint.NewTextHandler(w, &tint.Options{Level: l, TimeFormat: time.TimeOnly, NoColor: true})), nil
}

// agentEnv builds the agent's whole environment: PATH and --pass-env
// names from ours, then --env values with the model URL filled in.
func agentEnv(pass, set []string, modelURL string) []string {
	var env []string
	for _, name := range append([]string{"PATH"}, pass...) {
		if v, ok := os.LookupEnv(name); ok {
			env = append(env, name+"="+v)
		}
	}
	for _, kv := range set {
		env = append(env, strings.ReplaceAll(kv, modelURLVar, modelURL))
	}
	return env
}

func renderTemplate(spec, modelURL string) error {
	src, dst, ok := strings.Cut(spec, "=")
	if !ok {
		return fmt.Errorf("--template %q: want SRC=DST", spec)
	}
	data, err := os.ReadFile(src)
	if err != nil {
		return fmt.Errorf("--template: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return fmt.Errorf("--template: %w", err)
	}
	if err := os.WriteFile(dst, []byte(strings.ReplaceAll(string(data), modelURLVar, modelURL)), 0o644); err != nil {
		return fmt.Errorf("--template: %w", err)
	}
	return nil
}

func parseAnswers(specs []string) (map[string]json.RawMessage, error) {
	answers := map[string]json.RawMessage{}
	for _, s := range specs {
		method, result, ok := strings.Cut(s, "=")
		if !ok || !json.Valid([]byte(result)) {
			return nil, fmt.Errorf("--answer %q: want METHOD=JSON", s)
		}
		answers[method] = json.RawMessage(result)
	}
	return answers, nil
}

func parseScrub(specs []string) ([]driver.Replacement, error) {
	var out []driver.Replacement
	for _, s := range specs {
		old, repl, ok := strings.Cut(s, "=")
		if !ok || old == "" {
			return nil, fmt.Errorf("--scrub %q: want OLD=NEW", s)
		}
		out = append(out, driver.Replacement{Old: old, New: repl})
	}
	return out, nil
}

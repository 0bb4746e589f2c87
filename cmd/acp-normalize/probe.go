package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"sync"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/acp-normalize/acp-normalize/internal/terminal"
	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/proxy"
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/route"
)

// probeTimeout bounds each of the probe's requests by default: long
// enough for an agent that starts through npx or checks a login, short
// enough to say "timed out" before a user gives up.
const probeTimeout = 30 * time.Second

// ACP's error code for a session/new that needs authenticate first.
const codeAuthRequired = -32000

// probeCommand is `acp-normalize probe -- AGENT [ARGS...]`.
func probeCommand(st streams) *cli.Command {
	flags := []cli.Flag{
		&cli.BoolFlag{Name: "json", Usage: "print the findings as one JSON object (for bug reports)"},
		&cli.DurationFlag{Name: "timeout", Value: probeTimeout, Usage: "how long each request may take"},
		&cli.StringFlag{Name: "modules", Value: "all", Usage: modulesUsage()},
		&cli.DurationFlag{Name: "kill-grace", Value: proxy.DefaultKillGrace,
			Usage: "how long the agent gets to exit after stdin closes, and again after SIGTERM"},
	}
	return helpCommand(st, "probe", probeAction,
		append(flags, optionFlags(moduleOptions(), false)...)...)
}

// proxyResult is what proxy.Run returned.
type proxyResult struct {
	code int
	err  error
}

// probeFailure is what makes the probe exit 1: its one line.
type probeFailure struct{ msg string }

func (f *probeFailure) Error() string { return f.msg }

func probeAction(c *cli.Context, st streams) error {
	argv := c.Args().Slice()
	if len(argv) == 0 {
		return usageError("probe: no agent command given; usage: acp-normalize probe [--json] -- AGENT [ARGS...]")
	}
	if c.Duration("timeout") <= 0 || c.Duration("kill-grace") <= 0 {
		return usageError("probe: --timeout and --kill-grace must be positive")
	}
	settings := optionSettings(c, moduleOptions())
	if err := checkVendor(allModules(), settings); err != nil {
		return usageError("probe: --vendor: %v", err)
	}
	if err := rewrite.CheckClientSettings(settings); err != nil {
		return usageError("probe: %v", err)
	}
	if err := rewrite.CheckChoices(moduleOptions(), settings); err != nil {
		return usageError("probe: %v", err)
	}
	mods, err := selectModules(allModules(), c.String("modules"))
	if err != nil {
		return usageError("probe: --modules: %v", err)
	}
	p := &prober{
		argv:     argv,
		mods:     mods,
		vendor:   settings.String(rewrite.VendorOption),
		timeout:  c.Duration("timeout"),
		grace:    c.Duration("kill-grace"),
		settings: settings,
	}
	rep, failure := p.run()
	if failure != nil {
		// Built from redacted answers and capture lines; the proxy's own
		// errors are searched too (R2).
		failure.msg, rep.Failure = pipe.RedactText(failure.msg), pipe.RedactText(rep.Failure)
	}
	if c.Bool("json") {
		if err := writeJSON(st.stdout, rep); err != nil {
			return &exitError{code: exitFailure, err: err}
		}
	} else if rep.Initialize != nil {
		rep.writeText(st.stdout)
	}
	if failure != nil {
		// On a terminal: escaped as the report is.
		return &exitError{code: exitFailure, err: fmt.Errorf("probe: %s", terminal.Text(failure.msg))}
	}
	return nil
}

// prober runs one probe.
type prober struct {
	argv     []string
	mods     []rewrite.Module
	vendor   string
	settings rewrite.Settings
	timeout  time.Duration
	grace    time.Duration
}

// run starts the agent behind the proxy (the real one: its modules, its
// process handling), plays a client that sends initialize and
// session/new, closes the client's stream and reports. The failure, when
// not nil, is the one line the probe exits 1 with.
func (p *prober) run() (*probeReport, *probeFailure) {
	rep := &probeReport{Argv: pipe.RedactArgs(p.argv)}
	name := rep.Argv[0]
	if _, err := exec.LookPath(name); err != nil {
		rep.Failure = fmt.Sprintf("agent %q not found: %v", name, errors.Unwrap(err))
		if !errors.Is(err, exec.ErrNotFound) {
			rep.Failure = fmt.Sprintf("cannot run agent %q: %v", name, errors.Unwrap(err))
		}
		return rep, &probeFailure{rep.Failure}
	}
	scratch, err := os.MkdirTemp("", "acp-normalize-probe-")
	if err != nil {
		rep.Failure = fmt.Sprintf("cannot make a scratch directory: %v", err)
		return rep, &probeFailure{rep.Failure}
	}
	defer os.RemoveAll(scratch)

	// In memory only, read below; redacted as a capture is (R2): the
	// report is for bug reports, pasted in public.
	var captured probeCapture
	capture := pipe.NewCaptureSink(captured.record, false)
	// A small queue: a flood the writer cannot keep up with is left out
	// (a "dropped" event), not held (P6).
	capture.SetQueueLimit(probeQueue)
	toProxy, clientW := io.Pipe()
	clientR, fromProxy := io.Pipe()
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, proxy.ForwardedSignals()...)
	defer signal.Stop(sigs)

	notFrames := make(chan struct{}, 1)
	done := make(chan proxyResult, 1)
	started := time.Now()
	go func() {
		code, err := proxy.Run(proxy.Config{
			Argv: p.argv,
			Router: route.RouterConfig{
				Modules:  p.mods,
				Settings: p.settings,
				Logger:   slog.New(nonJSONWatch{notFrames}),
				Version:  version,
				Capture:  capture,
			},
			Options:     p.settings.Recorded(moduleOptions()),
			KillGrace:   p.grace,
			Stdin:       toProxy,
			Stdout:      fromProxy,
			AgentStderr: io.Discard, // kept in the capture; shown on failure
			Signals:     sigs,
		})
		_ = fromProxy.Close()
		done <- proxyResult{code, err}
	}()

	cl := newProbeClient(clientW, clientR, notFrames)
	ended := func() proxyResult {
		_ = clientW.Close() // the client leaves: the proxy ends the agent (F5)
		closed := time.Now()
		r := <-done
		_ = toProxy.Close()
		cl.wait()
		_ = capture.Close()
		rep.Exit = &probeExit{Code: r.code, AfterMS: time.Since(closed).Milliseconds(), GraceMS: p.grace.Milliseconds()}
		return r
	}

	// initialize, as an editor would send it.
	initParams := map[string]any{
		"protocolVersion": 1,
		"clientCapabilities": map[string]any{
			"fs":       map[string]bool{"readTextFile": false, "writeTextFile": false},
			"terminal": false,
			// The user can run the agent's login in a terminal: agents
			// list their terminal logins only to clients that say so.
			"auth": map[string]bool{"terminal": true},
		},
		"clientInfo": map[string]any{"name": "acp-normalize-probe", "version": version},
	}
	initResp, waitErr := cl.call("initialize", initParams, p.timeout)
	if waitErr != nil {
		r := ended()
		rep.analyze(&captured, p)
		rep.Failure = p.initFailure(waitErr, r, rep, time.Since(started))
		return rep, &probeFailure{rep.Failure}
	}
	if initResp.Error != nil {
		ended()
		rep.analyze(&captured, p)
		rep.Failure = fmt.Sprintf("not ACP: %s answered initialize with error %d %q", name, initResp.Error.Code, initResp.Error.Message)
		return rep, &probeFailure{rep.Failure}
	}
	rep.Initialize = initResp.Result
	rep.InitializeMS = time.Since(started).Milliseconds()

	newStarted := time.Now()
	newResp, waitErr := cl.call("session/new", map[string]any{"cwd": scratch, "mcpServers": []any{}}, p.timeout)
	var failure string
	switch {
	case errors.Is(waitErr, errProbeTimeout) || errors.Is(waitErr, errNotACP):
		failure = fmt.Sprintf("timed out: %s answered initialize but not session/new within %s", name, p.timeout)
		rep.Session = &probeSession{Error: "timed out"}
	case errors.Is(waitErr, errProbeEcho):
		failure = fmt.Sprintf("not ACP: %s answered initialize, then sent the probe's own session/new request back", name)
		rep.Session = &probeSession{Error: "echoed"}
	case waitErr != nil:
		failure = fmt.Sprintf("%s answered initialize, then exited before answering session/new", name)
		rep.Session = &probeSession{Error: "the agent exited"}
	case newResp.Error != nil && newResp.Error.Code == codeAuthRequired:
		rep.AuthRequired = true
		rep.Session = &probeSession{Error: fmt.Sprintf("%d %s", newResp.Error.Code, newResp.Error.Message)}
		failure = fmt.Sprintf("auth required: %s needs a login before session/new", name)
	case newResp.Error != nil:
		rep.Session = &probeSession{Error: fmt.Sprintf("%d %s", newResp.Error.Code, newResp.Error.Message)}
		failure = fmt.Sprintf("%s answered initialize, but session/new failed: %d %s", name, newResp.Error.Code, newResp.Error.Message)
	default:
		rep.Session = readSession(newResp.Result)
		rep.Session.MS = time.Since(newStarted).Milliseconds()
	}
	ended()
	rep.analyze(&captured, p)
	if rep.AuthRequired {
		failure += rep.loginHint()
	}
	if failure != "" {
		rep.Failure = failure
		return rep, &probeFailure{failure}
	}
	return rep, nil
}

// initFailure says why initialize got no answer.
func (p *prober) initFailure(waitErr error, r proxyResult, rep *probeReport, took time.Duration) string {
	name := p.argv[0]
	var se *proxy.StartError
	if errors.As(r.err, &se) {
		return fmt.Sprintf("cannot run agent %q: %v", name, se.Err)
	}
	if r.err != nil {
		return fmt.Sprintf("the proxy failed: %v", r.err)
	}
	last := ""
	if n := len(rep.Stderr); n > 0 {
		last = "; its last stderr line: " + quoteLine(rep.Stderr[n-1])
	}
	if len(rep.NonJSON) > 0 {
		return fmt.Sprintf("not ACP: %s wrote %s on stdout, not a JSON-RPC frame%s", name, quoteLine(rep.NonJSON[0]), last)
	}
	if errors.Is(waitErr, errProbeEcho) {
		return fmt.Sprintf("not ACP: %s sent the probe's own initialize request back (it echoes its input, as cat does)%s", name, last)
	}
	if errors.Is(waitErr, errProbeTimeout) {
		return fmt.Sprintf("timed out: %s did not answer initialize within %s%s", name, p.timeout, last)
	}
	if rep.AgentFrames > 0 {
		return fmt.Sprintf("not ACP: %s exited (code %d) without answering initialize%s", name, r.code, last)
	}
	return fmt.Sprintf("not ACP: %s exited (code %d) after %s without writing a frame%s", name, r.code, took.Round(time.Millisecond), last)
}

// quoteLine quotes a line, shortened to fit one screen line.
func quoteLine(s string) string {
	const limit = 120
	if r := []rune(s); len(r) > limit {
		s = string(r[:limit]) + "..."
	}
	return fmt.Sprintf("%q", s)
}

var errProbeTimeout = errors.New("timed out")

// errProbeEcho: the agent sent one of the probe's own requests back to it.
var errProbeEcho = errors.New("the agent echoed a request of the probe")

// clientMethods are the requests the probe sends: an agent that sends one
// of them to the client repeats what it read (cat), and answering it
// would only make the echo answer the probe's own request.
var clientMethods = map[string]bool{"initialize": true, "session/new": true}

// probeClient is the probe's side of the proxy: it sends requests and
// answers whatever the agent asks with -32601, as a minimal editor.
type probeClient struct {
	w io.Writer
	// notFrames gets a value when the agent wrote a line that is not
	// JSON (rule F2): a program that is no ACP agent, or a banner.
	notFrames <-chan struct{}
	mu        sync.Mutex
	nextID    int
	waits     map[string]chan probeResponse
	gone      chan struct{}
	// echo is closed when the agent sent a request of the probe's own
	// methods back (clientMethods).
	echo     chan struct{}
	echoOnce sync.Once
}

type probeResponse struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data,omitempty"`
	} `json:"error"`
}

func newProbeClient(w io.Writer, r io.Reader, notFrames <-chan struct{}) *probeClient {
	cl := &probeClient{w: w, notFrames: notFrames, waits: map[string]chan probeResponse{}, gone: make(chan struct{}), echo: make(chan struct{})}
	go cl.read(r)
	return cl
}

// read routes every frame the proxy writes: responses to their callers,
// agent requests answered -32601.
func (cl *probeClient) read(r io.Reader) {
	defer close(cl.gone)
	br := bufio.NewReaderSize(r, 1<<16)
	for {
		line, err := br.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			cl.handle(line)
		}
		if err != nil {
			return
		}
	}
}

func (cl *probeClient) handle(frame []byte) {
	env := pipe.Peek(frame)
	switch env.Kind {
	case pipe.Response:
		// Everything the report takes from an answer (an error message,
		// agentInfo, auth methods, session modes) is redacted as a
		// capture is (R2): the report is pasted in public.
		frame = pipe.Redact(frame)
		var resp probeResponse
		if json.Unmarshal(frame, &resp) != nil {
			return
		}
		cl.mu.Lock()
		ch := cl.waits[string(env.ID)]
		delete(cl.waits, string(env.ID))
		cl.mu.Unlock()
		if ch != nil {
			ch <- resp
		}
	case pipe.Request:
		if clientMethods[string(env.Method)] {
			cl.echoOnce.Do(func() { close(cl.echo) })
			return
		}
		reply := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"Method not found: the probe answers no requests"}}`+"\n", env.ID)
		_, _ = io.WriteString(cl.w, reply)
	}
}

// call sends a request and waits for its response, the timeout, or the
// end of the proxy's output.
func (cl *probeClient) call(method string, params any, timeout time.Duration) (probeResponse, error) {
	cl.mu.Lock()
	cl.nextID++
	n := cl.nextID
	ch := make(chan probeResponse, 1)
	cl.waits[fmt.Sprint(n)] = ch
	cl.mu.Unlock()
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": n, "method": method, "params": params})
	if err != nil {
		return probeResponse{}, err
	}
	if _, err := cl.w.Write(append(body, '\n')); err != nil {
		return probeResponse{}, fmt.Errorf("the agent is gone: %w", err)
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var notACP <-chan time.Time // after a non-JSON line: a short wait for the answer
	for {
		select {
		case resp := <-ch:
			if resp.Error != nil && resp.Error.Message == "agent exited" {
				return resp, errors.New("the agent exited") // the proxy's F6 answer
			}
			return resp, nil
		case <-cl.gone:
			select {
			case resp := <-ch:
				return resp, nil
			default:
			}
			return probeResponse{}, errors.New("the agent exited")
		case <-timer.C:
			return probeResponse{}, errProbeTimeout
		case <-cl.echo:
			return probeResponse{}, errProbeEcho
		case <-cl.notFrames:
			if notACP == nil {
				notACP = time.After(min(notACPWait, timeout))
			}
		case <-notACP:
			return probeResponse{}, errNotACP
		}
	}
}

// notACPWait is how long a request waits for its answer once the agent
// wrote a line that is not JSON: a banner before the frames is fine, a
// program that is no ACP agent (a forgotten "acp" argument starts Cursor's
// interactive UI) is said so without the whole --timeout.
const notACPWait = 2 * time.Second

var errNotACP = errors.New("not ACP")

// nonJSONWatch is the router's logger in the probe: it only notices the
// agent's non-JSON lines (the router logs each with rule F2); the capture
// keeps everything else.
type nonJSONWatch struct{ seen chan<- struct{} }

func (w nonJSONWatch) Enabled(context.Context, slog.Level) bool { return true }
func (w nonJSONWatch) WithAttrs([]slog.Attr) slog.Handler       { return w }
func (w nonJSONWatch) WithGroup(string) slog.Handler            { return w }
func (w nonJSONWatch) Handle(_ context.Context, r slog.Record) error {
	rule, from := "", ""
	r.Attrs(func(a slog.Attr) bool {
		switch a.Key {
		case "rule":
			rule = a.Value.String()
		case "from":
			from = a.Value.String()
		}
		return true
	})
	if rule == "F2" && from == pipe.Agent.String() {
		select {
		case w.seen <- struct{}{}:
		default:
		}
	}
	return nil
}

// wait waits until the proxy's output has been read to its end.
func (cl *probeClient) wait() { <-cl.gone }

package driver

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/acp-normalize/acp-normalize/pipe"
)

// Result tells how a recorded session went.
type Result struct {
	// StopReason is the prompt response's stopReason ("" when it had none
	// or failed).
	StopReason string
	// ExitCode is the agent's exit code (128+N for signal N).
	ExitCode int
	// Killed says the agent had to be sent SIGTERM or SIGKILL.
	Killed bool
	// AgentRequests counts the agent->client requests by method.
	AgentRequests map[string]int
}

// Run records one session as Config describes. The capture is complete
// (exit event included) whenever the agent could be started, even when
// Run returns an error (a request that timed out or failed, say).
func Run(ctx context.Context, cfg Config) (Result, error) {
	if err := cfg.check(); err != nil {
		return Result{}, err
	}
	cfg.defaults()
	s := &session{
		cfg:      cfg,
		rec:      pipe.NewCaptureWriter(cfg.Capture, false),
		pending:  map[string]chan []byte{},
		activity: make(chan struct{}, 1),
		requests: map[string]int{},
	}
	s.rec.SetClock(cfg.Clock)
	return s.run(ctx)
}

type session struct {
	cfg Config
	rec *pipe.CaptureWriter

	writeMu sync.Mutex
	stdin   io.WriteCloser

	mu        sync.Mutex
	nextID    int
	pending   map[string]chan []byte
	requests  map[string]int
	sessionID string

	activity chan struct{}
}

func (s *session) run(ctx context.Context) (Result, error) {
	cmd := exec.Command(s.cfg.Argv[0], s.cfg.Argv[1:]...)
	cmd.Env = s.cfg.Env
	cmd.Dir = s.cfg.Dir
	ownGroup(cmd)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return Result{}, fmt.Errorf("driver: stdin: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return Result{}, fmt.Errorf("driver: stdout: %w", err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return Result{}, fmt.Errorf("driver: stderr: %w", err)
	}
	argv := make([]string, len(s.cfg.Argv))
	for i, a := range s.cfg.Argv {
		argv[i] = s.scrub(a)
	}
	if err := cmd.Start(); err != nil {
		return Result{}, fmt.Errorf("driver: starting %s: %w", s.cfg.Argv[0], err)
	}
	s.stdin = stdin
	s.rec.Write(pipe.Record{Event: "start", Version: "acp-capture", Argv: argv})

	var readers sync.WaitGroup
	readers.Add(2)
	go func() { defer readers.Done(); s.readStdout(stdout) }()
	go func() { defer readers.Done(); s.readStderr(stderr) }()
	exited := make(chan struct{})
	var waitErr error
	go func() {
		readers.Wait() // Wait closes the pipes: read them to the end first
		waitErr = cmd.Wait()
		close(exited)
	}()

	res := Result{}
	talkErr := s.talk(ctx, &res, exited)

	// End the agent: stdin closed, then SIGTERM, then SIGKILL.
	s.closeStdin()
	select {
	case <-exited:
	case <-time.After(s.cfg.KillGrace):
		res.Killed = true
		terminate(cmd.Process)
		select {
		case <-exited:
		case <-time.After(s.cfg.KillGrace):
			kill(cmd.Process)
			<-exited
		}
	}
	var exitErr *exec.ExitError
	if waitErr != nil && !errors.As(waitErr, &exitErr) {
		talkErr = errors.Join(talkErr, fmt.Errorf("driver: waiting for the agent: %w", waitErr))
	}
	res.ExitCode = exitCode(cmd.ProcessState)
	s.rec.Write(pipe.Record{Event: "exit", Code: &res.ExitCode})
	s.mu.Lock()
	res.AgentRequests = s.requests
	s.mu.Unlock()
	if err := s.rec.Flush(); err != nil {
		talkErr = errors.Join(talkErr, fmt.Errorf("driver: writing the capture: %w", err))
	}
	return res, talkErr
}

// talk runs the client's side of the session up to the end of lingering.
func (s *session) talk(ctx context.Context, res *Result, exited <-chan struct{}) error {
	caps := clientCapabilities{FS: fsCapabilities{ReadTextFile: s.cfg.ClientFS, WriteTextFile: s.cfg.ClientFS}}
	if s.cfg.ClientSubagents {
		caps.Subagents = &struct{}{}
	}
	if _, err := s.call(ctx, exited, "initialize", initializeParams{
		ProtocolVersion:    1,
		ClientCapabilities: caps,
		ClientInfo:         implementation{Name: "acp-capture", Version: "0.1.0"},
	}); err != nil {
		return err
	}
	result, err := s.call(ctx, exited, "session/new", newSessionParams{CWD: s.cfg.Workspace, MCPServers: []any{}})
	if err != nil {
		return err
	}
	var created struct {
		SessionID string `json:"sessionId"`
	}
	if err := json.Unmarshal(result, &created); err != nil || created.SessionID == "" {
		return fmt.Errorf("driver: session/new result without sessionId: %s", result)
	}
	s.mu.Lock()
	s.sessionID = created.SessionID
	s.mu.Unlock()
	if s.cfg.Mode != "" {
		if _, err := s.call(ctx, exited, "session/set_mode", setModeParams{SessionID: created.SessionID, ModeID: s.cfg.Mode}); err != nil {
			return err
		}
	}
	if s.cfg.CancelAfter > 0 {
		// An editor's stop button: the prompt still has to be answered
		// (with stopReason "cancelled").
		cancel := time.AfterFunc(s.cfg.CancelAfter, func() {
			s.cfg.Log.Warn("prompt not answered: cancelling", "after", s.cfg.CancelAfter)
			if err := s.notify("session/cancel", cancelParams{SessionID: created.SessionID}); err != nil {
				s.cfg.Log.Warn("session/cancel", "err", err)
			}
		})
		defer cancel.Stop()
	}
	result, err = s.call(ctx, exited, "session/prompt", promptParams{
		SessionID: created.SessionID,
		Prompt:    []textBlock{{Type: "text", Text: s.cfg.Prompt}},
	})
	if err != nil {
		return err
	}
	var prompted struct {
		StopReason string `json:"stopReason"`
	}
	_ = json.Unmarshal(result, &prompted)
	res.StopReason = prompted.StopReason
	s.cfg.Log.Info("prompt answered", "stopReason", prompted.StopReason)
	s.linger(ctx, exited)
	return nil
}

// linger waits until the agent has been quiet for Linger (or LingerMax
// has passed, or it exited).
func (s *session) linger(ctx context.Context, exited <-chan struct{}) {
	deadline := time.NewTimer(s.cfg.LingerMax)
	defer deadline.Stop()
	quiet := time.NewTimer(s.cfg.Linger)
	defer quiet.Stop()
	for {
		select {
		case <-s.activity:
			quiet.Reset(s.cfg.Linger)
		case <-quiet.C:
			return
		case <-deadline.C:
			s.cfg.Log.Warn("agent still busy at the end of --linger-max")
			return
		case <-exited:
			return
		case <-ctx.Done():
			return
		}
	}
}

// call sends a request and waits for its response's result.
func (s *session) call(ctx context.Context, exited <-chan struct{}, method string, params any) (json.RawMessage, error) {
	s.mu.Lock()
	id := s.nextID
	s.nextID++
	ch := make(chan []byte, 1)
	s.pending[fmt.Sprint(id)] = ch
	s.mu.Unlock()
	frame, err := json.Marshal(request{JSONRPC: "2.0", ID: id, Method: method, Params: params})
	if err != nil {
		return nil, fmt.Errorf("driver: %s: %w", method, err)
	}
	s.cfg.Log.Info("request", "method", method, "id", id)
	if err := s.send(frame); err != nil {
		return nil, fmt.Errorf("driver: %s: %w", method, err)
	}
	timer := time.NewTimer(s.cfg.Timeout)
	defer timer.Stop()
	select {
	case resp := <-ch:
		var r struct {
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(resp, &r); err != nil {
			return nil, fmt.Errorf("driver: %s response: %w", method, err)
		}
		if r.Error != nil {
			return nil, fmt.Errorf("driver: %s failed: %s", method, r.Error)
		}
		return r.Result, nil
	case <-timer.C:
		return nil, fmt.Errorf("driver: no response to %s within %s", method, s.cfg.Timeout)
	case <-exited:
		return nil, fmt.Errorf("driver: the agent exited before answering %s", method)
	case <-ctx.Done():
		return nil, fmt.Errorf("driver: %s: %w", method, ctx.Err())
	}
}

// notify sends a notification.
func (s *session) notify(method string, params any) error {
	frame, err := json.Marshal(notification{JSONRPC: "2.0", Method: method, Params: params})
	if err != nil {
		return fmt.Errorf("driver: %s: %w", method, err)
	}
	return s.send(frame)
}

// send records frame as from the client, then writes it to the agent.
func (s *session) send(frame []byte) error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if s.stdin == nil {
		return errors.New("stdin closed")
	}
	s.rec.Write(pipe.Record{From: pipe.Client, Frame: s.scrubBytes(frame)})
	if _, err := s.stdin.Write(append(frame, '\n')); err != nil {
		return fmt.Errorf("writing to the agent: %w", err)
	}
	return nil
}

func (s *session) closeStdin() {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if s.stdin != nil {
		_ = s.stdin.Close()
		s.stdin = nil
	}
}

func (s *session) readStdout(r io.Reader) {
	fr := pipe.NewReader(r)
	for {
		line, err := fr.ReadFrame()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				s.cfg.Log.Warn("reading the agent's stdout", "err", err)
			}
			return
		}
		frame := append([]byte(nil), line...)
		s.rec.Write(pipe.Record{From: pipe.Agent, Frame: s.scrubBytes(frame)})
		select {
		case s.activity <- struct{}{}:
		default:
		}
		s.dispatch(frame)
	}
}

// readStderr records the agent's stderr line by line, lines of any
// length: it never stops reading, so the agent never blocks on stderr.
func (s *session) readStderr(r io.Reader) {
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadString('\n')
		if line != "" {
			line = s.scrub(strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r"))
			s.rec.Write(pipe.Record{From: pipe.Agent, Stderr: &line})
		}
		if err != nil {
			return
		}
	}
}

// dispatch routes a frame from the agent: a response to its waiting
// call, a request to its answer.
func (s *session) dispatch(frame []byte) {
	env := pipe.Peek(frame)
	switch env.Kind {
	case pipe.Response:
		s.mu.Lock()
		ch := s.pending[string(env.ID)]
		delete(s.pending, string(env.ID))
		s.mu.Unlock()
		if ch != nil {
			ch <- frame
		}
	case pipe.Request:
		method := string(env.Method)
		s.mu.Lock()
		s.requests[method]++
		s.mu.Unlock()
		s.cfg.Log.Info("agent request", "method", method)
		// Answered off the read loop: an answer must never wait for the
		// agent to read while the agent waits for us to read.
		id := append([]byte(nil), env.ID...)
		go s.answer(id, method, frame)
	}
}

func (s *session) scrub(v string) string {
	for _, r := range s.cfg.Scrub {
		v = strings.ReplaceAll(v, r.Old, r.New)
	}
	return v
}

func (s *session) scrubBytes(b []byte) []byte {
	if len(s.cfg.Scrub) == 0 {
		return b
	}
	return []byte(s.scrub(string(b)))
}

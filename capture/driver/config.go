package driver

import (
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"time"
)

// Config describes one recorded session.
type Config struct {
	// Argv is the agent's command line. Required.
	Argv []string
	// Env is the agent's whole environment (KEY=VALUE); nothing else is
	// inherited.
	Env []string
	// Dir is the agent's working directory (default: Workspace).
	Dir string
	// Workspace is the session's cwd and the only place fs/* may touch.
	// Required.
	Workspace string
	// Capture receives the recording.
	Capture io.Writer
	// Clock stamps the records (default time.Now); tests fix it.
	Clock func() time.Time

	// ClientSubagents declares clientCapabilities.subagents:{}.
	ClientSubagents bool
	// ClientFS declares fs.readTextFile and fs.writeTextFile and serves
	// them inside Workspace.
	ClientFS bool
	// Mode, when set, is sent as session/set_mode after session/new.
	Mode string
	// Prompt is the text of the one session/prompt. Required.
	Prompt string
	// Answers maps agent->client request methods to the result to send
	// (raw JSON) instead of -32601.
	Answers map[string]json.RawMessage

	// CancelAfter, when set, sends session/cancel if the prompt has not
	// been answered by then (an agent whose turn hangs).
	CancelAfter time.Duration

	// Timeout bounds each of initialize, session/new, session/set_mode and
	// session/prompt.
	Timeout time.Duration
	// Linger is how long the agent must stay quiet after the prompt's
	// response before it is ended (background work reports late);
	// LingerMax caps the whole wait.
	Linger, LingerMax time.Duration
	// KillGrace is how long the agent gets to exit after its stdin is
	// closed, and again after SIGTERM, before SIGKILL.
	KillGrace time.Duration

	// Scrub replaces strings in everything recorded (frames, stderr
	// lines, argv), e.g. a path of the recording machine.
	Scrub []Replacement

	Log *slog.Logger
}

// Replacement is one scrub: Old becomes New.
type Replacement struct{ Old, New string }

func (c *Config) check() error {
	switch {
	case len(c.Argv) == 0:
		return errors.New("driver: no agent command")
	case c.Workspace == "":
		return errors.New("driver: no workspace")
	case c.Prompt == "":
		return errors.New("driver: no prompt")
	case c.Capture == nil:
		return errors.New("driver: no capture writer")
	}
	return nil
}

func (c *Config) defaults() {
	if c.Dir == "" {
		c.Dir = c.Workspace
	}
	if c.Clock == nil {
		c.Clock = time.Now
	}
	if c.Timeout == 0 {
		c.Timeout = 5 * time.Minute
	}
	if c.Linger == 0 {
		c.Linger = 5 * time.Second
	}
	if c.LingerMax == 0 {
		c.LingerMax = 2 * time.Minute
	}
	if c.KillGrace == 0 {
		c.KillGrace = 3 * time.Second
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
}

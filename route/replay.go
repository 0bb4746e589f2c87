package route

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/acp-normalize/acp-normalize/pipe"
)

// StepKind says what a replay Step stands for.
type StepKind uint8

const (
	// StepFrame is an input frame (or non-JSON line) routed through the
	// modules: Outs is what each side would have received.
	StepFrame StepKind = iota + 1
	// StepStderr is an agent stderr line; it is routed nowhere.
	StepStderr
	// StepEvent is an event record of the capture (start, client-gone,
	// signal, exit, or an acpdbg meta line). For client-gone, signal and
	// exit events, Outs holds what that end of the connection produces
	// (rules C12 and F6). In an acp-inspector trace of several
	// connections, a "connection" event (Connection set) starts each
	// connection after the first, with a fresh router.
	StepEvent
	// StepEnd is the end of the capture: Outs holds what the modules said
	// when the client went away (rule C12). It comes last, after any exit
	// event, and only when the capture had no exit event (in a trace of
	// several connections: last of each connection).
	StepEnd
	// StepError is a capture line that could not be read; Err says why.
	StepError
)

var stepKindNames = [...]string{"", "frame", "stderr", "event", "end", "error"}

func (k StepKind) String() string {
	if int(k) < len(stepKindNames) {
		return stepKindNames[k]
	}
	return "unknown"
}

// Step is one input record of a capture and what replaying it produced.
// Its slices are owned by the Step (they stay valid after the callback).
type Step struct {
	Kind StepKind
	// Line is the 1-based line of the record in its capture (0 for StepEnd).
	Line int
	// TS is the record's timestamp, zero when the capture had none.
	TS time.Time
	// From is the side that sent the input (StepFrame, StepStderr).
	From pipe.Side
	// In is the input: the frame's raw bytes, or the text of a non-JSON
	// line (NonJSON set).
	In      []byte
	NonJSON bool
	// Text is the stderr line (StepStderr) or the event name (StepEvent).
	Text string
	// Code is the exit code of an exit event, when recorded.
	Code *int
	// Version, Argv and Modules are what a start event recorded: the
	// proxy's version, the agent command and the modules then in use;
	// Policy is its nonJSON setting ("drop" or "forward", "" when not
	// recorded) and Options the module flags that were on.
	Version       string
	Argv, Modules []string
	Policy        string
	Options       []string
	// IDToken is the token of the proxy's own request ids (C12), "" when
	// the capture has none.
	IDToken string
	// Component is set for a start event of a conductor's proxy component
	// (K1): its agent side's frames were recorded unwrapped.
	Component bool
	// Signal names the signal of a signal event.
	Signal string
	// Connection is the ordinal of the connection a "connection" event
	// starts (acp-inspector traces).
	Connection int64
	// Outs is what the router wrote because of this step, in order.
	Outs []Out
	// Err is why the line could not be read (StepError).
	Err error
}

// Delivered reports whether a StepFrame's input reached the other side,
// as is (an Out with no Op) or replaced (OpReplace).
func (s *Step) Delivered() bool {
	for _, o := range s.Outs {
		if o.Re == 0 {
			continue
		}
		if o.Op == "" || o.Op == pipe.OpReplace {
			return true
		}
	}
	return false
}

// Changed reports whether normalization changed anything in this step:
// the input was replaced or dropped, or frames were added.
func (s *Step) Changed() bool {
	if s.Kind == StepFrame && !s.Delivered() {
		return true
	}
	for _, o := range s.Outs {
		if o.Op != "" {
			return true
		}
	}
	return false
}

// Replay runs the input records of one capture through a fresh Router
// built from cfg, as if they arrived on a live connection, and calls fn
// with each Step in capture order (rule R3). No process is started.
//
// Output records of the capture (op lines) are skipped: they are what the
// replay recomputes. A line that cannot be read becomes a StepError and
// replay goes on with the next line. The end of the connection follows
// the live proxy: a client-gone or signal event gives the modules their
// last word (Router.ClientGone, rule C12) where the live proxy gave it; an
// exit event answers the client's open requests (Router.AgentGone, rule
// F6) and nothing else, since an agent that exits while the client is
// still there gives the modules no last word; a capture without an exit
// event ends with a StepEnd carrying ClientGone's frames (none when a
// client-gone or signal event came first).
// An acpdbg frame that is a JSON string (not an object or array) is
// replayed as the non-JSON line it stands for. cfg.Capture is ignored.
//
// Replay returns the first error of fn, or an error reading r; bad lines
// are not errors of Replay.
func Replay(r io.Reader, cfg RouterConfig, fn func(*Step) error) error {
	return ReplayWith(r, func(*Step) (RouterConfig, error) { return cfg, nil }, fn)
}

// ReplayWith is Replay with the router's configuration chosen from the
// capture itself: configure is called once, before the first step that
// needs the router, with the capture's start event when the capture
// begins with one (bad lines aside), else with nil. It lets a replay use
// the settings recorded in the start event (Step.Modules, Policy,
// Options). An error of configure ends the replay and is returned.
func ReplayWith(r io.Reader, configure func(start *Step) (RouterConfig, error), fn func(*Step) error) error {
	var router *Router
	setUp := func(start *Step) error {
		cfg, err := configure(start)
		if err != nil {
			return err
		}
		cfg.Capture = nil
		if cfg.IDToken == "" && start != nil {
			// The recorded session's own request ids, so that the
			// client's recorded answers are recognised (C12).
			cfg.IDToken = start.IDToken
		}
		router, err = NewRouter(cfg)
		return err
	}
	var outs []Out
	gone := false
	var conn int64 // the connection of a trace being replayed
	for rec, err := range pipe.NewCaptureReader(r).Records() {
		var ce *pipe.CaptureError
		if errors.As(err, &ce) {
			if err := fn(&Step{Kind: StepError, Line: ce.Line, Err: ce.Err}); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return fmt.Errorf("reading capture: %w", err)
		}
		if rec.Conn != 0 && conn != 0 && rec.Conn != conn && router != nil {
			// A trace's next connection: the last one ends as a capture
			// without an exit event does, and this one starts afresh.
			if !gone {
				outs = router.ClientGone(outs[:0])
				if err := fn(&Step{Kind: StepEnd, Outs: ownOuts(outs)}); err != nil {
					return err
				}
			}
			router, gone = nil, false
			if err := fn(&Step{Kind: StepEvent, Line: rec.Line, TS: rec.TS, Text: "connection", Connection: rec.Conn}); err != nil {
				return err
			}
		}
		if rec.Conn != 0 {
			conn = rec.Conn
		}
		step := Step{Line: rec.Line, TS: rec.TS, From: rec.From}
		if router == nil {
			var start *Step
			if rec.Event == "start" {
				start = &Step{Kind: StepEvent, Text: rec.Event, Version: rec.Version, Argv: rec.Argv,
					Modules: rec.Modules, Policy: rec.NonJSON, Options: rec.Options, IDToken: rec.IDToken, Component: rec.Component}
			}
			if err := setUp(start); err != nil {
				return err
			}
		}
		switch {
		case rec.Event != "":
			step.Kind, step.Text, step.Code = StepEvent, rec.Event, rec.Code
			step.Version, step.Argv, step.Modules = rec.Version, rec.Argv, rec.Modules
			step.Policy, step.Options, step.Signal, step.IDToken = rec.NonJSON, rec.Options, rec.Signal, rec.IDToken
			step.Component = rec.Component
			switch rec.Event {
			case "client-gone", "signal":
				// Live, the modules got their last word here (C12): the
				// client left, or the proxy was told to shut down.
				outs = router.ClientGone(outs[:0])
				step.Outs = ownOuts(outs)
			case "exit":
				if !gone {
					// Live, an agent that exits while the client is still
					// there ends the connection with AgentGone alone (F6);
					// the modules' last word came earlier if the client
					// left or a signal arrived first.
					gone = true
					outs = router.AgentGone(outs[:0])
					step.Outs = ownOuts(outs)
				}
			}
		case !rec.IsInput():
			continue // an output record: recomputed, not replayed
		case rec.Stderr != nil:
			step.Kind, step.Text = StepStderr, *rec.Stderr
		default:
			step.Kind = StepFrame
			step.In, step.NonJSON = inputBytes(&rec)
			outs = router.Handle(rec.From, step.In, outs[:0])
			step.Outs = ownOuts(outs)
		}
		if err := fn(&step); err != nil {
			return err
		}
	}
	if gone {
		return nil
	}
	if router == nil {
		if err := setUp(nil); err != nil {
			return err
		}
	}
	// The capture was cut: treat it as the client leaving. After a
	// client-gone or signal event this says nothing more.
	outs = router.ClientGone(outs[:0])
	return fn(&Step{Kind: StepEnd, Outs: ownOuts(outs)})
}

// inputBytes returns the bytes a record stands for on the wire, and
// whether they are a non-JSON line.
func inputBytes(rec *pipe.Record) ([]byte, bool) {
	if rec.Frame == nil {
		return []byte(*rec.Text), !pipe.IsJSON([]byte(*rec.Text))
	}
	if pipe.FirstByte(rec.Frame) == '"' {
		var s string
		if json.Unmarshal(rec.Frame, &s) == nil {
			return []byte(s), !pipe.IsJSON([]byte(s))
		}
	}
	return rec.Frame, false
}

// ownOuts copies outs so that they outlive the router's next call.
func ownOuts(outs []Out) []Out {
	if len(outs) == 0 {
		return nil
	}
	own := make([]Out, len(outs))
	for i, o := range outs {
		o.Frame = bytes.Clone(o.Frame)
		own[i] = o
	}
	return own
}

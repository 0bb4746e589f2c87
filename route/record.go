package route

import (
	"fmt"

	"github.com/acp-normalize/acp-normalize/pipe"
)

// NonJSONPolicy says what happens to a line that is not JSON (rule F2).
type NonJSONPolicy int

const (
	// DropNonJSON logs and records non-JSON lines but does not forward them.
	DropNonJSON NonJSONPolicy = iota
	// ForwardNonJSON relays them like any other line.
	ForwardNonJSON
)

// ParseNonJSONPolicy parses "drop" or "forward".
func ParseNonJSONPolicy(s string) (NonJSONPolicy, error) {
	switch s {
	case "drop":
		return DropNonJSON, nil
	case "forward":
		return ForwardNonJSON, nil
	}
	return 0, fmt.Errorf("--non-json must be drop or forward, not %q", s)
}

func (r *Router) handleNonJSON(from pipe.Side, raw []byte, seq int64, dst []Out) []Out {
	// The line is quoted redacted, as a capture keeps it (R2): logs end
	// up in bug reports. Redacted a little past the cut, so that a secret
	// the cut splits is still known by its shape.
	text := raw
	if len(text) > 2*maxLoggedText {
		text = text[:2*maxLoggedText]
	}
	text = []byte(pipe.RedactText(string(text)))
	if len(text) > maxLoggedText {
		text = text[:maxLoggedText]
	}
	action := "dropped (--non-json=forward relays it)"
	if r.cfg.NonJSON == ForwardNonJSON {
		action = "forwarded"
	}
	r.log.Warn("non-JSON line "+action, "rule", "F2", "from", from.String(), "line", string(text), "bytes", len(raw))
	if r.cfg.NonJSON == ForwardNonJSON {
		return append(dst, Out{To: from.Other(), Frame: raw, Re: seq})
	}
	r.record(seq, pipe.OpDrop, from.Other(), nil)
	return dst
}

func (r *Router) recordInput(from pipe.Side, raw []byte) int64 {
	if r.cfg.Capture == nil {
		return r.seq.Add(1)
	}
	rec := pipe.Record{From: from}
	if pipe.IsJSON(raw) {
		rec.Frame = raw
	} else {
		s := string(raw)
		rec.Text = &s
	}
	return r.cfg.Capture.Write(rec)
}

// RecordStderr records one agent stderr line.
func (r *Router) RecordStderr(line string) {
	if r.cfg.Capture != nil {
		r.cfg.Capture.Write(pipe.Record{From: pipe.Agent, Stderr: &line})
	}
}

func (r *Router) record(re int64, op string, to pipe.Side, frame []byte) {
	if r.cfg.Capture != nil {
		r.cfg.Capture.Write(pipe.Record{Re: re, Op: op, To: to, Frame: frame})
	}
}

package proxy

import (
	"errors"
	"fmt"
	"io"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite"
)

// Handshake is how a conductor tells a component that it is one (rule
// K1), which also decides how the component's frames for its successor
// are wrapped.
type Handshake uint8

const (
	// NoHandshake: the client is no conductor talking to a component.
	NoHandshake Handshake = iota
	// MetaHandshake is the TypeScript conductor's (@thinkwell/conductor):
	// an initialize whose params carry _meta.proxy: true, answered with
	// _meta.proxy: true in the result; frames for the successor travel as
	// _proxy/successor/request and _proxy/successor/notification.
	MetaHandshake
	// ProxyInitHandshake is the Rust conductor's (ACP schema v1,
	// unstable): proxy/initialize, answered once an initialize forwarded
	// through proxy/successor is answered; proxy/successor wraps requests
	// and notifications alike.
	ProxyInitHandshake
)

func (h Handshake) String() string {
	switch h {
	case MetaHandshake:
		return "initialize with _meta.proxy, TypeScript conductor"
	case ProxyInitHandshake:
		return "proxy/initialize, Rust conductor"
	}
	return "none"
}

// Wrapper method names, by handshake (subagent-sessions.md §7). Both are
// accepted from any conductor; a component writes its own conductor's.
const (
	methodTSSuccessorRequest      = "_proxy/successor/request"
	methodTSSuccessorNotification = "_proxy/successor/notification"
	methodProxySuccessor          = "proxy/successor"
	methodProxyInitialize         = "proxy/initialize"
	methodCancelRequest           = "$/cancel_request"
)

// HandshakeOf reports which handshake frame is, if any: a proxy/initialize
// request, or an initialize request whose params._meta.proxy is true.
func HandshakeOf(frame []byte) Handshake {
	env := pipe.Peek(frame)
	if env.Kind != pipe.Request {
		return NoHandshake
	}
	switch {
	case env.MethodIs(methodProxyInitialize):
		return ProxyInitHandshake
	case env.MethodIs("initialize"):
		if v, ok := rawjson.Lookup(env.Params, "_meta", "proxy"); ok && string(v) == "true" {
			return MetaHandshake
		}
	}
	return NoHandshake
}

// HandshakeError is rule K3: a component that got no handshake, or a
// proxy with an agent command that got one. The command reports it in
// one line and exits 2.
type HandshakeError struct {
	// Got is the handshake the client sent (NoHandshake: none).
	Got Handshake
	// First is the first frame's method ("" when it had none).
	First string
	// Ended is set when the client's stream ended before any frame.
	Ended bool
}

func (e *HandshakeError) Error() string {
	if e.Got == NoHandshake {
		began := "began with a frame that is no request"
		switch {
		case e.Ended:
			began = "sent nothing"
		case e.First != "":
			began = fmt.Sprintf("began with %q", e.First)
		}
		return "no agent command, and the client " + began +
			", not a conductor's proxy handshake (initialize with _meta.proxy: true, or proxy/initialize):" +
			" give the agent command (acp-normalize [flags] -- AGENT [ARGS...]), or put acp-normalize in a conductor's proxy slot"
	}
	return "the client is a conductor starting a proxy component (handshake: " + e.Got.String() +
		"), but an agent command was given: in a proxy slot run acp-normalize without one" +
		" (the conductor reaches the agent); keep `acp-normalize -- AGENT` for a conductor's agent slot with no proxy in front"
}

// handshakeReply is the error response the client gets to the request
// that failed the handshake, so that a conductor shows why (K3).
func handshakeReply(frame []byte, herr *HandshakeError) []byte {
	env := pipe.Peek(frame)
	if env.Kind != pipe.Request {
		return nil
	}
	return rewrite.ErrorResponse(env.ID, jsonrpc2.CodeInvalidRequest, "acp-normalize: "+herr.Error())
}

// guardHandshake watches the first frame of a proxy's client stream (an
// agent command was given): a conductor's proxy handshake there is K3's
// second case, and the stream ends with fail's error, nothing of it
// relayed. Otherwise every byte passes on unchanged, and past the first
// frame the guard only passes reads through.
type guardHandshake struct {
	r       io.Reader
	fail    func(frame []byte) error
	line    []byte // the first line so far
	started bool   // a line was seen: a BOM is removed from the first only
	done    bool
}

// maxGuardedLine bounds what the guard holds of a first line (P6): an
// initialize is far shorter; a longer first line is not inspected.
const maxGuardedLine = 1 << 20

func (g *guardHandshake) Read(p []byte) (int, error) {
	n, err := g.r.Read(p)
	if g.done {
		return n, err
	}
	chunk := p[:n]
	for len(chunk) > 0 && !g.done {
		i := indexNewline(chunk)
		if i < 0 {
			g.line = append(g.line, chunk...)
			if len(g.line) > maxGuardedLine {
				g.done, g.line = true, nil
			}
			break
		}
		g.line = append(g.line, chunk[:i]...)
		chunk = chunk[i+1:]
		if ferr := g.line1(); ferr != nil {
			return 0, ferr
		}
	}
	if errors.Is(err, io.EOF) && !g.done && len(g.line) > 0 {
		// The relay's reader takes a last line without its newline for
		// a frame (F1): so does the guard.
		if ferr := g.line1(); ferr != nil {
			return 0, ferr
		}
	}
	return n, err
}

// line1 looks at the line held in g.line: a blank one is no first frame
// and is forgotten; the first frame ends the guard, with fail's error
// when it is a handshake.
func (g *guardHandshake) line1() error {
	frame := pipe.TrimLineEnding(append(g.line, '\n'))
	if !g.started {
		// As the relay's reader does (F1): the stream's BOM goes,
		// even on a line of its own, which is then blank.
		g.started, frame = true, stripBOM(frame)
	}
	if len(trimSpace(frame)) == 0 {
		g.line = g.line[:0] // a blank line (F1) is no first frame
		return nil
	}
	g.done = true
	g.line = nil
	if HandshakeOf(frame) != NoHandshake {
		return g.fail(frame)
	}
	return nil
}

func indexNewline(b []byte) int {
	for i, c := range b {
		if c == '\n' {
			return i
		}
	}
	return -1
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && rawjson.IsSpace(b[0]) {
		b = b[1:]
	}
	return b
}

func stripBOM(b []byte) []byte {
	if len(b) >= 3 && b[0] == 0xEF && b[1] == 0xBB && b[2] == 0xBF {
		return b[3:]
	}
	return b
}

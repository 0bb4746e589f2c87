package proxy

// Component mode (rule K1): no agent command, a conductor on stdin and
// stdout. The conductor's one stream carries both of the component's
// sides: frames of the client side travel plain, frames of the successor
// (the agent side) wrapped, as _proxy/successor/request and
// _proxy/successor/notification (TypeScript conductor) or proxy/successor
// (Rust conductor), with params {method, params}; responses to wrapped
// requests are plain responses to the wrapper's id, in both directions.
//
// The link splits that stream in two and joins it again, below the relay:
// a demultiplexer reads stdin, passes the client side's frames to the
// client loop and the successor's, unwrapped, to the agent loop (as an
// agent process's stdout would); frames for the successor are wrapped as
// they are written. So the router and the modules see the same unwrapped
// frames as in front of an agent process (K2). A wrapper carries the
// inner frame's id, method and params bytes unchanged (spliced, never
// decoded, P1), and its own id is the inner request's: the response
// comes back under that id and passes on as it arrived. The link tells
// the responses for the successor from those for the client side by the
// ids of the wrappers still unanswered: both are ids the conductor chose
// for its own requests to this component (or the proxy's own, C12), which
// a conductor keeps distinct on its connection.
//
// The handshake, rule K1: the first frame must be one (HandshakeOf).
// Rust's proxy/initialize reaches the router as the initialize it stands
// for (same id and params), so its answer answers proxy/initialize; the
// TypeScript conductor's marker is echoed: the successor's answer to the
// initialize gets result._meta.proxy = true as it arrives, before the
// router (and the capture) sees it.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite"
)

// maxWrapped bounds the wrapped requests a link tracks (P6). Past it a new
// one is not tracked: its answer then goes the client side's way.
const maxWrapped = 1 << 16

// maxKeptScratch is the largest wrap buffer kept for the next frame.
const maxKeptScratch = 1 << 20

// errInputClosed is the error of a write for the successor after the
// connection closed its input (the client left).
var errInputClosed = errors.New("input to the successor is closed")

// link is the conductor's stream as the two sides of a connection: it is
// the agentEnd of component mode (the successor) and the source of the
// client side's frames.
type link struct {
	log *slog.Logger
	out *pipe.Writer // stdout: both sides' frames

	// The two halves of stdin: the client side's frames, and the
	// successor's, unwrapped.
	clientR, agentR *io.PipeReader
	clientW, agentW *io.PipeWriter

	hs atomic.Uint32 // the Handshake, set by the first frame

	mu sync.Mutex
	// wrapped holds the idKeys of wrapped requests the successor has not
	// answered; true marks the forwarded initialize.
	wrapped     map[string]bool
	initDone    bool // the successor's initialize answer has come
	inputClosed bool
	warned      map[string]bool
	scratch     []byte // the frame being wrapped (under mu)

	endOnce sync.Once
	ended   chan struct{}
	code    int
	err     error // *HandshakeError when the handshake failed (K3)
}

// newLink starts reading the conductor's stream in.
func newLink(in io.Reader, out *pipe.Writer, log *slog.Logger) *link {
	l := &link{
		log:     log,
		out:     out,
		wrapped: make(map[string]bool),
		warned:  make(map[string]bool),
		ended:   make(chan struct{}),
	}
	l.clientR, l.clientW = io.Pipe()
	l.agentR, l.agentW = io.Pipe()
	go l.demux(in)
	return l
}

// Interface guard.
var _ agentEnd = (*link)(nil)

// client is the client side's stream, for the client loop.
func (l *link) client() io.Reader { return l.clientR }

func (l *link) handshake() Handshake { return Handshake(l.hs.Load()) }

// end ends both halves once, with the exit code and error the proxy
// reports.
func (l *link) end(code int, err error) {
	l.endOnce.Do(func() {
		l.code, l.err = code, err
		_ = l.clientW.Close()
		_ = l.agentW.Close()
		close(l.ended)
	})
}

// demux reads the conductor's stream to its end.
func (l *link) demux(in io.Reader) {
	rd := pipe.NewReader(in)
	first := true
	var unwrapped []byte
	for {
		frame, err := rd.ReadFrame()
		if err != nil {
			if first {
				// The stream ended before any handshake (K3).
				l.end(exitUsage, &HandshakeError{Got: NoHandshake, Ended: true})
				return
			}
			if !errors.Is(err, io.EOF) {
				l.log.Warn("reading from the conductor failed", "err", err)
			}
			l.end(0, nil)
			return
		}
		if first {
			first = false
			hs := HandshakeOf(frame)
			if hs == NoHandshake {
				l.refuse(frame)
				return
			}
			l.hs.Store(uint32(hs))
			l.log.Info("running as a proxy component", "handshake", hs.String(), "rule", "K1")
			if hs == ProxyInitHandshake {
				// The router sees the initialize proxy/initialize stands
				// for; the answer to it (same id) answers proxy/initialize.
				frame, err = rawjson.Set(frame, []byte(`"initialize"`), "method")
				if err != nil {
					l.refuse(frame)
					return
				}
				if !l.write(l.clientW, frame, nil) {
					return
				}
				continue
			}
		}
		var ok bool
		unwrapped, ok = l.route(frame, rd.Raw(), unwrapped[:0])
		if !ok {
			return
		}
		if cap(unwrapped) > maxKeptScratch {
			unwrapped = nil // one huge frame does not pin its size (P6)
		}
	}
}

// refuse answers a first frame that is no handshake and ends the link
// (K3).
func (l *link) refuse(frame []byte) {
	env := pipe.Peek(frame)
	herr := &HandshakeError{Got: NoHandshake, First: string(env.Method)}
	if reply := handshakeReply(frame, herr); reply != nil {
		_ = l.out.WriteFrame(reply, true)
	}
	l.end(exitUsage, herr)
}

// exitUsage is the exit code of K3 (the command's usage mistakes).
const exitUsage = 2

// route passes one frame of the conductor's stream to its side. buf is
// scratch for an unwrapped frame; route returns it for reuse, and false
// when the link has ended.
func (l *link) route(frame, raw, buf []byte) ([]byte, bool) {
	env := pipe.Peek(frame)
	switch env.Kind {
	case pipe.Request, pipe.Notification:
		if !isSuccessorWrapper(env.Method) {
			break
		}
		inner, err := unwrap(buf, &env)
		if err != nil {
			l.warnOnce("unwrap", "a wrapped frame from the conductor is malformed; dropped", "method", string(env.Method), "err", err)
			if env.Kind == pipe.Request {
				_ = l.out.WriteFrame(rewrite.ErrorResponse(env.ID, jsonrpc2.CodeInvalidParams, "acp-normalize: "+err.Error()), true)
			}
			return buf, true
		}
		return inner, l.write(l.agentW, inner, nil)
	case pipe.Response:
		init, ok := l.answered(env.ID)
		if !ok {
			break
		}
		if init && l.handshake() == MetaHandshake && !env.Error {
			// K1: the TypeScript conductor checks result._meta.proxy.
			if marked, err := rawjson.Set(frame, []byte("true"), "result", "_meta", "proxy"); err == nil {
				return buf, l.write(l.agentW, marked, nil)
			}
			l.log.Warn("cannot mark the initialize answer for the conductor; it will refuse the component", "rule", "K1")
		}
		return buf, l.write(l.agentW, frame, raw)
	}
	return buf, l.write(l.clientW, frame, raw)
}

// write writes one frame to a half, raw (the frame and its newline, as
// read) when there is one. It reports false when the half is closed.
func (l *link) write(w *io.PipeWriter, frame, raw []byte) bool {
	var err error
	if raw != nil {
		_, err = w.Write(raw)
	} else {
		// The pipe's reader copies before Write returns: frame's buffer
		// is free again afterwards.
		_, err = w.Write(append(frame, '\n'))
	}
	return err == nil
}

// answered reports whether id is that of a wrapped request, and forgets
// it; init is set for the forwarded initialize.
func (l *link) answered(id []byte) (init, ok bool) {
	if id == nil {
		return false, false
	}
	key := pipe.IDKey(string(id))
	l.mu.Lock()
	defer l.mu.Unlock()
	init, ok = l.wrapped[key]
	if ok {
		delete(l.wrapped, key)
		if init {
			l.initDone = true
		}
	}
	return init, ok
}

// isConductorMethod reports whether a decoded method is one of the
// conductor protocol's own: its envelopes and its handshake.
func isConductorMethod(m string) bool {
	return isSuccessorWrapper([]byte(m)) || m == methodProxyInitialize
}

func isSuccessorWrapper(method []byte) bool {
	switch string(method) {
	case methodTSSuccessorRequest, methodTSSuccessorNotification, methodProxySuccessor:
		return true
	}
	return false
}

// unwrap appends to dst the frame a wrapper carries: the wrapper's id
// (for a request), then params.method and params.params, their bytes as
// they came. The wrapper's own _meta is hop-local and not carried.
func unwrap(dst []byte, env *pipe.Envelope) ([]byte, error) {
	if rawjson.FirstByte(env.Params) != '{' {
		return dst, errors.New("its params are not an object")
	}
	vals := make([][]byte, 2)
	if err := rawjson.Pick(env.Params, []string{"method", "params"}, vals); err != nil {
		return dst, err
	}
	method, params := vals[0], vals[1]
	if rawjson.FirstByte(method) != '"' {
		return dst, errors.New("its params.method is not a string")
	}
	if m, _ := rawjson.DecodeString(method); isConductorMethod(m) {
		// Sent on plain toward the client side, the conductor would take
		// it for this component's own envelope and route it back (K2).
		return dst, fmt.Errorf("it carries %s, a method of the conductor protocol, which no successor sends", m)
	}
	dst = append(dst, `{"jsonrpc":"2.0"`...)
	if env.Kind == pipe.Request {
		dst = append(dst, `,"id":`...)
		dst = append(dst, env.ID...)
	}
	dst = append(dst, `,"method":`...)
	dst = append(dst, method...)
	if params != nil && string(params) != "null" {
		dst = append(dst, `,"params":`...)
		dst = append(dst, params...)
	}
	return append(dst, '}'), nil
}

// warnOnce logs at warn the first time for key, at debug after.
func (l *link) warnOnce(key, msg string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.warnOnceLocked(key, msg, args...)
}

// warnOnceLocked is warnOnce with l.mu held.
func (l *link) warnOnceLocked(key, msg string, args ...any) {
	first := !l.warned[key]
	l.warned[key] = true
	if first {
		l.log.Warn(msg, args...)
	} else {
		l.log.Debug(msg, args...)
	}
}

// wrap appends to dst what frame becomes on its way to the successor: a
// request or notification wrapped in the handshake's envelope, a response
// as it is. ok is false for a frame that cannot travel to the successor
// (not JSON, a batch, malformed). l.mu must be held.
func (l *link) wrap(dst, frame []byte) (out []byte, ok bool) {
	env := pipe.Peek(frame)
	hs := l.handshake()
	switch env.Kind {
	case pipe.Response:
		return append(dst, frame...), true
	case pipe.Request:
		if len(l.wrapped) < maxWrapped {
			l.wrapped[pipe.IDKey(string(env.ID))] = env.MethodIs("initialize") && !l.initDone
		} else {
			l.warnOnceLocked("wrapped-cap", "too many requests for the successor unanswered; the next answers are not told apart", "max", maxWrapped, "rule", "P6")
		}
		method := methodTSSuccessorRequest
		if hs == ProxyInitHandshake {
			method = methodProxySuccessor
		}
		dst = append(dst, `{"jsonrpc":"2.0","id":`...)
		dst = append(dst, env.ID...)
		dst = append(dst, `,"method":"`...)
		dst = append(dst, method...)
	case pipe.Notification:
		if hs == ProxyInitHandshake && env.MethodIs(methodCancelRequest) {
			// Hop-local (schema: proxy/successor): the wrapper this
			// cancels carries the id it names, so it goes on unchanged.
			return append(dst, frame...), true
		}
		method := methodTSSuccessorNotification
		if hs == ProxyInitHandshake {
			method = methodProxySuccessor
		}
		dst = append(dst, `{"jsonrpc":"2.0","method":"`...)
		dst = append(dst, method...)
	default:
		return dst, false
	}
	dst = append(dst, `","params":{"method":"`...)
	dst = append(dst, env.Method...)
	dst = append(dst, '"')
	if env.Params != nil {
		dst = append(dst, `,"params":`...)
		dst = append(dst, env.Params...)
	}
	return append(dst, "}}"...), true
}

// wrapWriter is the successor's input: frames wrapped onto stdout.
type wrapWriter struct{ l *link }

func (w wrapWriter) WriteFrame(frame []byte, flush bool) error {
	return w.WriteFrames([][]byte{frame}, flush)
}

// WriteFrames wraps frames and writes them contiguously, buffered like
// any side's frames.
func (w wrapWriter) WriteFrames(frames [][]byte, flush bool) error {
	l := w.l
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.inputClosed {
		return errInputClosed
	}
	buf := l.scratch[:0]
	ends := make([]int, 0, len(frames))
	for _, f := range frames {
		n := len(buf)
		var ok bool
		if buf, ok = l.wrap(buf, f); !ok {
			buf = buf[:n]
			l.warnOnceLocked("unwrappable", "a frame that is not a JSON-RPC object cannot reach the successor through the conductor; dropped", "bytes", len(f))
			continue
		}
		ends = append(ends, len(buf))
	}
	parts := make([][]byte, len(ends))
	start := 0
	for i, end := range ends {
		parts[i], start = buf[start:end], end
	}
	err := l.out.WriteFrames(parts, flush)
	l.scratch = buf[:0]
	if cap(buf) > maxKeptScratch {
		l.scratch = nil // one huge frame does not pin its size (P6)
	}
	return err
}

// WriteRun wraps each frame of run (each followed by "\n").
func (w wrapWriter) WriteRun(run []byte) error {
	var frames [][]byte
	for line := range bytes.Lines(run) {
		frames = append(frames, bytes.TrimSuffix(line, []byte{'\n'}))
	}
	return w.WriteFrames(frames, false)
}

func (w wrapWriter) Flush() error { return w.l.out.Flush() }

// The agentEnd of component mode.

func (l *link) output() io.Reader    { return l.agentR }
func (l *link) input() frameWriter   { return wrapWriter{l} }
func (l *link) errOutput() io.Reader { return nil }

// closeInput: nothing is sent; frames for the successor are dropped from
// here on (the client has left, and the conductor with it).
func (l *link) closeInput() error {
	l.mu.Lock()
	l.inputClosed = true
	l.mu.Unlock()
	return nil
}

// wait returns when the conductor's stream has ended (exit code 0), the
// handshake failed (2, K3) or a signal ended the component (128+N).
func (l *link) wait() int {
	<-l.ended
	return l.code
}

// interruptRead ends the successor's half.
func (l *link) interruptRead() error {
	return l.agentR.CloseWithError(os.ErrDeadlineExceeded)
}

// signal ends the component: there is no process of its own to signal,
// and the conductor owns the successor.
func (l *link) signal(sig os.Signal) error {
	code := 1
	if s, ok := sig.(syscall.Signal); ok {
		code = 128 + int(s)
	}
	l.end(code, nil)
	return nil
}

func (l *link) terminate() error { return l.signal(syscall.SIGTERM) }
func (l *link) kill() error      { return l.signal(syscall.SIGKILL) }

// alive reports whether the link still runs.
func (l *link) alive() bool {
	select {
	case <-l.ended:
		return false
	default:
		return true
	}
}

func (l *link) release() {}

func (l *link) describe() []any { return []any{"agent", "the successor, through the conductor"} }

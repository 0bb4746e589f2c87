package mockagent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/route"
)

// itemKind is what a script item is.
type itemKind uint8

const (
	// itemFrame is an agent notification or request, written as recorded.
	itemFrame itemKind = iota + 1
	// itemResponse is the agent's response to a recorded client request.
	itemResponse
	// itemStderr is an agent stderr line.
	itemStderr
)

// item is one recorded agent output.
type item struct {
	kind  itemKind
	frame []byte // the frame, or the stderr line
	// gate is the index in Script.requests of the last client request
	// recorded before this item, or -1.
	gate int
	// awaits is the index in Script.items of the agent request whose
	// client answer was recorded after that client request and before
	// this item, or -1: the item waits for the live answer too.
	awaits int
	// req is the index of the request a response answers.
	req int
	// line is the capture line, for logs.
	line int
}

// request is a recorded client request: its method and its ordinal among
// the recorded requests of that method.
type request struct {
	method string
	nth    int
}

// Script is a capture prepared for serving.
type Script struct {
	items    []item
	requests []request
	byMethod map[string][]int // method -> indices in requests, in order
	response map[int]int      // request index -> index in items of its response
	skipped  int              // non-JSON agent lines and unmatched responses
	// loadable is whether the capture's agent answered initialize with
	// agentCapabilities.loadSession: true; sessions holds, per session the
	// capture knows (by its decoded id), what a session/load of it replays;
	// loads holds the session id of each recorded session/load request.
	loadable bool
	sessions map[string]*history
	loads    map[int]string
}

// history is what a session/load of one recorded session replays when the
// capture has no recorded load to serve it with.
type history struct {
	// frames are the session's recorded session/update notifications and
	// a user_message_chunk per content block of each recorded
	// session/prompt of it, in recorded order. A recorded load of the
	// session starts it afresh: the agent's replay re-sends the whole
	// conversation.
	frames [][]byte
	// answer is the index in Script.items of the recorded answer to the
	// last recorded load of the session, or -1.
	answer int
}

// session returns the history of the session with raw id sid, made on
// first sight; nil when sid is not a JSON string.
func (s *Script) session(sid []byte) *history {
	id, ok := rawjson.DecodeString(sid)
	if !ok || rawjson.FirstByte(sid) != '"' {
		return nil
	}
	h := s.sessions[id]
	if h == nil {
		h = &history{answer: -1}
		s.sessions[id] = h
	}
	return h
}

// Sessions returns how many sessions the capture knows, which a live
// session/load can reload when the capture's agent advertised loadSession.
func (s *Script) Sessions() int { return len(s.sessions) }

// Requests returns how many client requests the capture recorded.
func (s *Script) Requests() int { return len(s.requests) }

// Frames returns how many agent frames (responses, notifications and
// requests) the script will write when every request is made.
func (s *Script) Frames() int {
	n := 0
	for _, it := range s.items {
		if it.kind != itemStderr {
			n++
		}
	}
	return n
}

// LineError is a capture line Load could not read.
type LineError struct {
	Line int
	Err  error
}

func (e *LineError) Error() string { return "line " + strconv.Itoa(e.Line) + ": " + e.Err.Error() }
func (e *LineError) Unwrap() error { return e.Err }

// Load reads a capture into a Script. Lines that cannot be read are
// returned as *LineError values in bad and skipped; err is a failure to
// read r.
func Load(r io.Reader, logger *slog.Logger) (s *Script, bad []error, err error) {
	return LoadWith(r, logger, nil)
}

// LoadWith is Load with the capture replayed through mods while it is
// read. A capture recorded through the proxy holds, for an agent request
// the proxy answered on the editor's behalf (Cursor's cursor/create_plan,
// answered from the editor's answer to a permission request), no editor
// answer to that request; replaying the modules recovers the answer the
// agent got and where, so that what the agent sent after it waits for the
// live answer too.
func LoadWith(r io.Reader, logger *slog.Logger, mods []rewrite.Module) (s *Script, bad []error, err error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	s = &Script{byMethod: make(map[string][]int), response: make(map[int]int),
		sessions: make(map[string]*history), loads: make(map[int]string)}
	open := make(map[string]int) // raw id of a recorded client request -> index
	last := -1
	// asked maps the raw id of a recorded agent request to its item;
	// answered is the last of them the client answered since its last
	// request.
	asked := make(map[string]int)
	answered := -1
	err = route.Replay(r, route.RouterConfig{Modules: mods}, func(st *route.Step) error {
		switch st.Kind {
		case route.StepError:
			bad = append(bad, &LineError{Line: st.Line, Err: st.Err})
		case route.StepStderr:
			s.items = append(s.items, item{kind: itemStderr, frame: []byte(st.Text), gate: last, awaits: answered, line: st.Line})
		case route.StepFrame:
			if st.From == pipe.Client {
				env := pipe.Peek(st.In)
				if env.Kind == pipe.Response {
					if at, ok := asked[string(env.ID)]; ok {
						delete(asked, string(env.ID))
						answered = at
					}
				}
				// The modules' answers to the agent that this client frame
				// caused count as the client's.
				for _, o := range st.Outs {
					if o.To != pipe.Agent {
						continue
					}
					if oe := pipe.Peek(o.Frame); oe.Kind == pipe.Response {
						if at, ok := asked[string(oe.ID)]; ok {
							delete(asked, string(oe.ID))
							answered = at
						}
					}
				}
				if env.Kind == pipe.Request {
					m := string(env.Method)
					last, answered = len(s.requests), -1
					s.requests = append(s.requests, request{method: m, nth: len(s.byMethod[m])})
					s.byMethod[m] = append(s.byMethod[m], last)
					open[string(env.ID)] = last
					s.addClientRequest(m, st.In, last)
				}
				return nil
			}
			if env := pipe.Peek(st.In); env.Kind == pipe.Request && !st.NonJSON {
				asked[string(env.ID)] = len(s.items)
			}
			s.addAgentFrame(st, last, answered, open, logger)
		}
		return nil
	})
	if err != nil {
		return nil, bad, err
	}
	return s, bad, nil
}

// addClientRequest records what a client request tells of its session's
// history: a prompt's content blocks as the user's message, as ACP's
// session/load replays them; a load starts the history afresh.
func (s *Script) addClientRequest(method string, frame []byte, req int) {
	if method != "session/prompt" && method != "session/load" {
		return
	}
	sid, ok := rawjson.Lookup(frame, "params", "sessionId")
	if !ok {
		return
	}
	h := s.session(sid)
	if h == nil {
		return
	}
	switch method {
	case "session/load":
		id, _ := rawjson.DecodeString(sid)
		s.loads[req] = id
		h.frames = nil
	case "session/prompt":
		blocks, ok := rawjson.Lookup(frame, "params", "prompt")
		if !ok {
			return
		}
		_ = rawjson.Elements(blocks, func(block []byte) bool {
			if rawjson.FirstByte(block) == '{' {
				h.frames = append(h.frames, userChunk(sid, block))
			}
			return true
		})
	}
}

// userChunk is the session/update that replays one content block of a
// user's prompt, its session id and block as recorded.
func userChunk(sid, block []byte) []byte {
	const head = `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":`
	const mid = `,"update":{"sessionUpdate":"user_message_chunk","content":`
	out := make([]byte, 0, len(head)+len(sid)+len(mid)+len(block)+3)
	out = append(append(append(append(out, head...), sid...), mid...), block...)
	return append(out, "}}}"...)
}

// addAgentHistory records what an agent frame tells of the sessions: an
// initialize answer whether loads are served, a session/new answer a
// session, a session/update a frame of its session's history, the answer
// to a recorded load what a load of that session answers.
func (s *Script) addAgentHistory(env pipe.Envelope, frame []byte, req int) {
	switch env.Kind {
	case pipe.Notification:
		if string(env.Method) != "session/update" {
			return
		}
		if sid, ok := rawjson.Lookup(frame, "params", "sessionId"); ok {
			if h := s.session(sid); h != nil {
				h.frames = append(h.frames, frame)
			}
		}
	case pipe.Response:
		if _, ok := rawjson.Lookup(frame, "result"); !ok {
			return
		}
		switch s.requests[req].method {
		case "initialize":
			v, _ := rawjson.Lookup(frame, "result", "agentCapabilities", "loadSession")
			s.loadable = string(v) == "true"
		case "session/new":
			if sid, ok := rawjson.Lookup(frame, "result", "sessionId"); ok {
				s.session(sid)
			}
		case "session/load":
			if h := s.sessions[s.loads[req]]; h != nil {
				h.answer = len(s.items) - 1
			}
		}
	}
}

func (s *Script) addAgentFrame(st *route.Step, gate, awaits int, open map[string]int, logger *slog.Logger) {
	if st.NonJSON {
		s.skipped++
		logger.Debug("recorded non-JSON agent line skipped (stdout carries frames only)", "line", st.Line)
		return
	}
	env := pipe.Peek(st.In)
	if env.Kind != pipe.Response {
		s.items = append(s.items, item{kind: itemFrame, frame: st.In, gate: gate, awaits: awaits, line: st.Line})
		s.addAgentHistory(env, st.In, -1)
		return
	}
	req, ok := open[string(env.ID)]
	if !ok {
		s.skipped++
		logger.Debug("recorded response to no recorded request skipped", "line", st.Line, "id", string(env.ID))
		return
	}
	delete(open, string(env.ID))
	s.response[req] = len(s.items)
	s.items = append(s.items, item{kind: itemResponse, frame: st.In, gate: gate, awaits: awaits, req: req, line: st.Line})
	s.addAgentHistory(env, st.In, req)
}

// Config configures Serve.
type Config struct {
	// Stdin and Stdout are the client's streams.
	Stdin  io.Reader
	Stdout io.Writer
	// Stderr receives the recorded agent stderr lines; nil discards them.
	Stderr io.Writer
	Logger *slog.Logger
}

// server is the state of one Serve.
type server struct {
	s      *Script
	cfg    Config
	log    *slog.Logger
	w      *pipe.Writer
	next   int            // next item to write
	live   map[string]int // method -> live requests seen
	liveID map[int][]byte // recorded request index -> raw id of its live request
	// frames counts the live client requests and notifications; asked
	// maps an agent request written to the client (its raw id) to its
	// item, and askedAt holds, per item, frames when it was written; an
	// item in answered got its live answer. All are bounded by the script.
	frames   int
	forced   int // items up to this index are written whatever their gate
	asked    map[string]int
	askedAt  map[int]int
	answered map[int]bool
}

func newServer(s *Script, cfg Config) *server {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &server{
		s: s, cfg: cfg, log: cfg.Logger,
		w:        pipe.NewWriter(cfg.Stdout),
		live:     make(map[string]int),
		liveID:   make(map[int][]byte),
		forced:   -1,
		asked:    make(map[string]int),
		askedAt:  make(map[int]int),
		answered: make(map[int]bool),
	}
}

// Serve plays s to the client on cfg.Stdin/cfg.Stdout until the client's
// EOF. It returns nil at EOF, or the error that stopped it.
func Serve(s *Script, cfg Config) error {
	sv := newServer(s, cfg)
	sv.pump(-1)
	if err := sv.w.Flush(); err != nil {
		return fmt.Errorf("writing to client: %w", err)
	}
	// Flush before every read of the client, not only when the reader's
	// buffer is empty: a client that sent one request and half of the
	// next would otherwise wait for an answer held back in the writer.
	rd := pipe.NewReader(flushBeforeRead{r: cfg.Stdin, flush: func() { _ = sv.w.Flush() }})
	for {
		frame, err := rd.ReadFrame()
		if errors.Is(err, io.EOF) {
			sv.log.Debug("client closed its stream", "written", sv.next, "of", len(s.items))
			return sv.w.Flush()
		}
		if err != nil {
			_ = sv.w.Flush()
			return fmt.Errorf("reading from client: %w", err)
		}
		sv.handle(frame)
		if err := sv.w.Err(); err != nil {
			return fmt.Errorf("writing to client: %w", err)
		}
	}
}

// flushBeforeRead calls flush before every read of its source, so that
// nothing written stays buffered while Serve waits for the client.
type flushBeforeRead struct {
	r     io.Reader
	flush func()
}

func (f flushBeforeRead) Read(p []byte) (int, error) {
	f.flush()
	return f.r.Read(p)
}

// handle answers one frame from the client.
func (sv *server) handle(frame []byte) {
	env := pipe.Peek(frame)
	switch env.Kind {
	case pipe.Request:
	case pipe.Response:
		sv.log.Debug("client response to a recorded agent request read", "id", string(env.ID), "error", env.Error)
		if at, ok := sv.asked[string(env.ID)]; ok {
			delete(sv.asked, string(env.ID))
			sv.answered[at] = true
			sv.pump(-1)
		}
		return
	case pipe.Notification:
		sv.log.Debug("client notification ignored", "method", string(env.Method))
		sv.frames++
		sv.pump(-1)
		return
	case pipe.NotJSON:
		sv.log.Warn("client line ignored: not JSON", "bytes", len(frame))
		return
	case pipe.Batch:
		sv.answerBatch(frame)
		return
	default:
		// Never leave a client waiting on a malformed request: JSON-RPC
		// answers it with an error (its id when it can be read).
		sv.write(invalidAnswer(frame, env))
		return
	}
	if !validID(env.ID) {
		sv.log.Warn("client request with an invalid id answered -32600", "method", string(env.Method), "id", string(env.ID))
		sv.write(rewrite.ErrorResponse([]byte("null"), jsonrpc2.CodeInvalidRequest, "Invalid Request: id must be a string, a number or null"))
		return
	}
	method := string(env.Method)
	id := bytes.Clone(env.ID)
	if method == "session/load" && sv.load(frame, id) {
		return
	}
	sv.frames++
	recorded := sv.s.byMethod[method]
	nth := sv.live[method]
	if len(recorded) > 0 {
		// Counted only for recorded methods: the state stays bounded by
		// the capture whatever the client sends.
		sv.live[method]++
	}
	if nth >= len(recorded) {
		sv.pump(-1)
		if len(recorded) == 0 {
			sv.log.Warn("request not in the capture; answered method not found", "method", method, "id", string(id))
			sv.write(rewrite.ErrorResponse(id, jsonrpc2.CodeMethodNotFound, "Method not found: "+method+" (mock-agent: not in the capture)"))
		} else {
			sv.log.Warn("more requests than the capture has; answered with an error", "method", method, "recorded", len(recorded))
			sv.write(rewrite.ErrorResponse(id, jsonrpc2.CodeInternalError,
				fmt.Sprintf("mock-agent: the capture has only %d %s response(s)", len(recorded), method)))
		}
		return
	}
	req := recorded[nth]
	sv.liveID[req] = id
	at, ok := sv.s.response[req]
	switch {
	case !ok:
		sv.pump(-1)
		sv.log.Warn("the capture ends before the agent answered this request; answered with an error", "method", method, "id", string(id))
		sv.write(rewrite.ErrorResponse(id, jsonrpc2.CodeInternalError, "mock-agent: the capture has no response to this "+method))
	case at < sv.next:
		// Its response was passed over while this request was missing.
		sv.writeResponse(sv.s.items[at])
		sv.pump(-1)
	default:
		sv.pump(at)
	}
}

// load serves a session/load the capture's recorded loads do not: when the
// capture's agent advertised loadSession and the next recorded load (if
// any) is not of the same session. It replays the session's history and
// answers, or answers an unknown session with ACP's -32002. It reports
// whether it answered; if not, the load is matched as any request.
func (sv *server) load(frame, id []byte) bool {
	s := sv.s
	if !s.loadable {
		return false
	}
	raw, _ := rawjson.Lookup(frame, "params", "sessionId")
	sid, ok := rawjson.DecodeString(raw)
	if !ok || rawjson.FirstByte(raw) != '"' {
		if len(s.byMethod["session/load"]) > sv.live["session/load"] {
			return false
		}
		sv.frames++
		sv.pump(-1)
		sv.log.Warn("session/load without a string sessionId answered -32602", "id", string(id))
		sv.write(rewrite.ErrorResponse(id, jsonrpc2.CodeInvalidParams, "Invalid params: session/load needs a string sessionId"))
		return true
	}
	if rec := s.byMethod["session/load"]; sv.live["session/load"] < len(rec) && s.loads[rec[sv.live["session/load"]]] == sid {
		return false // the recorded load of this session, played as recorded
	}
	sv.frames++
	sv.pump(-1)
	h := s.sessions[sid]
	if h == nil {
		sv.log.Warn("session/load of a session not in the capture answered -32002", "session", sid, "id", string(id))
		sv.write(sessionNotFound(id, raw, sid))
		return true
	}
	sv.log.Debug("session/load served from the capture's history of the session", "session", sid, "frames", len(h.frames))
	for _, f := range h.frames {
		sv.write(f)
	}
	if h.answer >= 0 {
		it := s.items[h.answer]
		sv.writeAs(it, id)
		return true
	}
	answer, _ := rewrite.Result(id, []byte("{}"))
	sv.write(answer)
	return true
}

// sessionNotFound is ACP's answer to a request naming a session the agent
// does not know: -32002 (resource not found) with the session id as data.
func sessionNotFound(id, rawSid []byte, sid string) []byte {
	frame := rewrite.ErrorResponse(id, -32002, "Resource not found: session "+sid+" (mock-agent: not in the capture)")
	data := append(append([]byte(`{"sessionId":`), rawSid...), '}')
	if withData, err := rawjson.Set(frame, data, "error", "data"); err == nil {
		return withData
	}
	return frame
}

// invalidAnswer is the error response to a client frame that is no valid
// JSON-RPC message: -32700 (parse error, null id) when it is not JSON at
// all, else -32600 (invalid request) with its id when the id can be read.
func invalidAnswer(frame []byte, env pipe.Envelope) []byte {
	if !json.Valid(frame) {
		return rewrite.ErrorResponse([]byte("null"), jsonrpc2.CodeParseError, "Parse error")
	}
	id := []byte("null")
	if validID(env.ID) {
		id = env.ID
	}
	return rewrite.ErrorResponse(id, jsonrpc2.CodeInvalidRequest, "Invalid Request")
}

// validID reports whether raw is a JSON-RPC id: a string, a number or null.
func validID(raw []byte) bool {
	switch rawjson.FirstByte(raw) {
	case '"', 'n', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return true
	}
	return false
}

// answerBatch answers a batch, which the mock does not serve (ACP sends
// none): each request or invalid element gets its -32600 in one array, as
// JSON-RPC 2.0 answers a batch; notifications and responses get nothing.
// An empty or unreadable batch gets a single -32600 with a null id.
func (sv *server) answerBatch(frame []byte) {
	sv.log.Warn("client batch answered -32600: the mock agent serves single requests only", "bytes", len(frame))
	var answers [][]byte
	n := 0
	err := rawjson.Elements(frame, func(el []byte) bool {
		n++
		env := pipe.Peek(el)
		switch env.Kind {
		case pipe.Notification, pipe.Response:
		case pipe.Request:
			id := env.ID
			if !validID(id) {
				id = []byte("null")
			}
			answers = append(answers, rewrite.ErrorResponse(id, jsonrpc2.CodeInvalidRequest, "Invalid Request: batches are not served"))
		default:
			answers = append(answers, invalidAnswer(el, env))
		}
		return true
	})
	switch {
	case err != nil || n == 0:
		sv.write(rewrite.ErrorResponse([]byte("null"), jsonrpc2.CodeInvalidRequest, "Invalid Request"))
	case len(answers) > 0:
		sv.write(append(append([]byte{'['}, bytes.Join(answers, []byte{','})...), ']'))
	}
}

// pump writes items in order: every item up to index force, then items
// as long as the request recorded before each has been made live.
func (sv *server) pump(force int) {
	sv.forced = max(sv.forced, force)
	for sv.next < len(sv.s.items) {
		it := sv.s.items[sv.next]
		if !sv.released(it.awaits) || (sv.next > sv.forced && !sv.made(it.gate)) {
			return
		}
		sv.next++
		switch it.kind {
		case itemFrame:
			if env := pipe.Peek(it.frame); env.Kind == pipe.Request {
				sv.asked[string(env.ID)] = sv.next - 1
				sv.askedAt[sv.next-1] = sv.frames
			}
			sv.write(it.frame)
		case itemStderr:
			if sv.cfg.Stderr != nil {
				_, _ = sv.cfg.Stderr.Write(append(bytes.Clone(it.frame), '\n'))
			}
		case itemResponse:
			if _, ok := sv.liveID[it.req]; ok {
				sv.writeResponse(it)
			} else {
				sv.log.Debug("recorded response held until its request is made", "line", it.line, "method", sv.s.requests[it.req].method)
			}
		}
	}
}

// released reports whether an item that awaits the client's answer to
// the agent request at item index at may be written: the client answered
// it, or sent a request or notification since it was written, so that a
// client that never answers is never left waiting (or at is -1).
func (sv *server) released(at int) bool {
	if at < 0 || sv.answered[at] {
		return true
	}
	written, ok := sv.askedAt[at]
	return !ok || sv.frames > written
}

// made reports whether the live client has sent the recorded request with
// index gate (or gate is -1).
func (sv *server) made(gate int) bool {
	if gate < 0 {
		return true
	}
	r := sv.s.requests[gate]
	return sv.live[r.method] > r.nth
}

// writeResponse writes a recorded response with the live request's id.
func (sv *server) writeResponse(it item) { sv.writeAs(it, sv.liveID[it.req]) }

// writeAs writes a recorded response with id.
func (sv *server) writeAs(it item, id []byte) {
	frame := it.frame
	if rec, ok := rawjson.Lookup(frame, "id"); !ok || !bytes.Equal(rec, id) {
		changed, err := rawjson.Set(frame, id, "id")
		if err != nil {
			sv.log.Warn("recorded response not sent: cannot set its id", "line", it.line, "err", err)
			sv.write(rewrite.ErrorResponse(id, jsonrpc2.CodeInternalError, "mock-agent: recorded response unusable"))
			return
		}
		frame = changed
	}
	sv.write(frame)
}

func (sv *server) write(frame []byte) {
	_ = sv.w.WriteFrame(frame, false)
}

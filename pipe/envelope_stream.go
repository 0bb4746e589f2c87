package pipe

import (
	"bytes"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
)

// maxStreamValue bounds the id and method a StreamEnvelope keeps: an id
// or method longer than this is no id or method the proxy acts on (P6).
const maxStreamValue = 1 << 10

// maxStreamKey bounds the bytes of a top-level key a StreamEnvelope keeps:
// the keys it looks for are short ("m\u0065thod" is 11 bytes).
const maxStreamKey = 64

// StreamEnvelope is Peek for a frame read in pieces (F3: a frame longer
// than the read window streams): fed the frame's bytes piece by piece, it
// tracks the top level of the object across the pieces and keeps its id,
// method and whether it has a result or error, whatever piece they come
// in. Strings are skipped with a search for their closing quote, so a
// piece costs about what a byte search costs. It does not validate: a
// malformed frame gives what its bytes suggest. The zero value is ready
// for a frame's first piece.
type StreamEnvelope struct {
	// What the frame's top level held so far.
	ID        []byte // raw JSON of the id, blanks trimmed
	Method    []byte // the method's characters, decoded when escaped
	HasMethod bool
	HasResult bool
	Error     bool
	// TooLong is set when an id or method was longer than the proxy
	// keeps (maxStreamValue): not kept.
	TooLong bool

	depth     int
	top       byte // the frame's first non-blank byte
	seen      bool // top is set
	inStr     bool
	backslash bool // inside a string: an odd run of backslashes ends what was fed
	inKey     bool // the string being read is a top-level key
	expectKey bool // a string at depth 1 would be a key
	afterKey  bool // a top-level key was read; its ':' is next
	key       []byte
	keyLong   bool
	member    int // the top-level member whose value is being read: memberID, memberMethod
	capturing bool
	val       []byte
	valLong   bool
}

const (
	memberOther = iota
	memberID
	memberMethod
)

// First returns the frame's first non-blank byte fed so far, or 0.
func (s *StreamEnvelope) First() byte { return s.top }

// Kind classifies the frame by what was fed: Request, Notification,
// Response, Batch or NotJSON, Invalid when what was fed is none of those
// (yet).
func (s *StreamEnvelope) Kind() Kind {
	switch {
	case s.top == '[':
		return Batch
	case s.top != '{' || !s.seen:
		return NotJSON
	case s.HasMethod && s.ID != nil:
		return Request
	case s.HasMethod:
		return Notification
	case s.HasResult && s.ID != nil:
		return Response
	}
	return Invalid
}

// Envelope returns what was fed as an Envelope (no Params: a streamed
// frame's params are never whole).
func (s *StreamEnvelope) Envelope() Envelope {
	return Envelope{Kind: s.Kind(), Method: s.Method, ID: s.ID, Error: s.Error}
}

// Write feeds the next piece of the frame.
func (s *StreamEnvelope) Write(p []byte) {
	capStart := 0
	for i := 0; i < len(p); i++ {
		if s.inStr {
			j := bytes.IndexByte(p[i:], '"')
			if j < 0 {
				s.backslash = oddBackslashes(p[i:], s.backslash)
				if s.inKey {
					s.keep(p[i:])
				}
				break
			}
			q := i + j
			escaped := oddBackslashes(p[i:q], s.backslash)
			s.backslash = false
			if s.inKey {
				s.keep(p[i : q+1])
			}
			if escaped {
				i = q
				continue
			}
			s.inStr = false
			if s.inKey {
				s.inKey, s.afterKey = false, true
				if !s.keyLong {
					s.key = s.key[:len(s.key)-1] // its closing quote
				}
			}
			i = q
			continue
		}
		c := p[i]
		if !s.seen && !isSpace(c) {
			s.top, s.seen = c, true
			s.expectKey = c == '{'
		}
		switch c {
		case '"':
			s.inStr, s.backslash = true, false
			if s.depth == 1 && s.expectKey {
				s.inKey, s.expectKey = true, false
				s.key, s.keyLong = s.key[:0], false
			}
		case '{', '[':
			s.depth++
		case '}', ']':
			if s.depth == 1 && s.capturing {
				s.endValue(p[capStart:i])
			}
			s.depth--
		case ':':
			if s.depth == 1 && s.afterKey {
				s.afterKey = false
				s.startValue()
				capStart = i + 1
			}
		case ',':
			if s.depth == 1 {
				if s.capturing {
					s.endValue(p[capStart:i])
				}
				s.expectKey = s.top == '{'
			}
		}
	}
	if s.capturing {
		s.grow(p[capStart:])
	}
}

// oddBackslashes reports whether b ends with an odd run of backslashes,
// counting a run before b (odd: before) when all of b is backslashes.
func oddBackslashes(b []byte, before bool) bool {
	n := 0
	for n < len(b) && b[len(b)-1-n] == '\\' {
		n++
	}
	if n == len(b) {
		return before != (n%2 == 1)
	}
	return n%2 == 1
}

func (s *StreamEnvelope) keep(b []byte) {
	if len(s.key)+len(b) > maxStreamKey {
		s.keyLong = true
		return
	}
	s.key = append(s.key, b...)
}

// startValue begins the value of the top-level key just read.
func (s *StreamEnvelope) startValue() {
	key := s.key
	if s.keyLong {
		key = nil
	} else if bytes.IndexByte(key, '\\') >= 0 {
		key = nil
		if k, ok := rawjson.UnescapeKey(s.key); ok {
			key = []byte(k)
		}
	}
	s.member = memberOther
	switch string(key) {
	case "id":
		s.member = memberID
	case "method":
		s.member = memberMethod
	case "result":
		s.HasResult = true
	case "error":
		s.HasResult, s.Error = true, true
	}
	s.capturing = s.member != memberOther
	s.val, s.valLong = s.val[:0], false
}

func (s *StreamEnvelope) grow(b []byte) {
	if len(s.val)+len(b) > maxStreamValue {
		s.valLong = true
		return
	}
	s.val = append(s.val, b...)
}

// endValue ends the captured value, whose last bytes are b.
func (s *StreamEnvelope) endValue(b []byte) {
	s.grow(b)
	s.capturing = false
	if s.valLong {
		s.TooLong = true
		return
	}
	v := bytes.TrimFunc(s.val, func(r rune) bool { return r < 0x80 && isSpace(byte(r)) })
	switch s.member {
	case memberID:
		s.ID = append([]byte(nil), v...)
	case memberMethod:
		s.Method, s.HasMethod = nil, false
		if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
			s.HasMethod = true
			s.Method = append([]byte(nil), v[1:len(v)-1]...)
			if bytes.IndexByte(s.Method, '\\') >= 0 {
				if m, ok := rawjson.DecodeString(v); ok {
					s.Method = []byte(m)
				}
			}
		}
	}
}

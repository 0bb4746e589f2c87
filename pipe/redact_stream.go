package pipe

import (
	"bytes"
	"slices"
	"unicode/utf8"
)

// A frame that streams (F3: longer than the relay's read window, claimed
// by no module) is recorded in pieces, as text, and redacted as it comes
// (R2) by a TextRedactor: the text rules (secret shapes, `"key":"value"`
// pairs with a secret key, also escaped once, as inside a JSON text
// encoded in a string) over a window that overlaps the pieces, so that a
// secret split across two pieces is caught whole.

// streamCarry is what a TextRedactor holds back at the end of what it was
// given: a secret up to this long split across pieces is seen whole. The
// longest shapes (PEM keys of 4096-bit RSA, JWTs) are 2-4 KiB.
const streamCarry = 16 << 10

// streamChunk is how much a TextRedactor redacts at a time, beyond the
// carry.
const streamChunk = 256 << 10

// shapeContext is how far before a shape what it is recognized by may
// lie: "Authorization: Basic ", a URL's scheme and user.
const shapeContext = 128

// streamMaxSecret bounds a secret that has not ended (a PEM block without
// its END line, a token run): past it the redactor redacts what it holds
// of it and goes on (P6: memory stays bounded whatever the text).
const streamMaxSecret = 4 << 20

// TextRedactor redacts a text given in pieces and passes the result on in
// pieces (to emit), holding at most streamChunk + streamCarry bytes, more
// only while a secret it has found has not ended (up to streamMaxSecret).
// Not safe for concurrent use.
type TextRedactor struct {
	emit func([]byte) error
	pend []byte
	// skip is set inside the value of a secret pair whose end has not
	// come: bytes are dropped up to its closing quote, skip (`"` or
	// `\"`; the redacted value was emitted already).
	skip      []byte
	backslash bool // skipping a `"` value: an odd run of backslashes ends what was dropped
	err       error
}

// NewTextRedactor returns a TextRedactor that passes redacted text to
// emit (which may keep nothing of what it is given).
func NewTextRedactor(emit func([]byte) error) *TextRedactor {
	return &TextRedactor{emit: emit}
}

// Write redacts the next piece of the text.
func (t *TextRedactor) Write(p []byte) error {
	for len(p) > 0 && t.err == nil {
		if t.skip != nil {
			p = p[t.skipped(p):]
			continue
		}
		t.pend = append(t.pend, p...)
		p = nil
		for t.err == nil && t.skip == nil && len(t.pend) >= streamChunk+streamCarry {
			before := len(t.pend)
			t.redact(false)
			if len(t.pend) == before {
				break // a secret not ended yet: held until it does
			}
		}
	}
	return t.err
}

// Close redacts and passes on what is held: the text has ended.
func (t *TextRedactor) Close() error {
	if t.err == nil && t.skip == nil {
		t.redact(true)
	}
	return t.err
}

// skipped drops the start of p that is still inside a secret value, and
// returns how much of p it consumed (the closing quote included).
func (t *TextRedactor) skipped(p []byte) int {
	if len(t.skip) == 1 { // `"`: its end is a quote after an even run of backslashes
		for i := 0; i < len(p); {
			j := bytes.IndexByte(p[i:], '"')
			if j < 0 {
				t.backslash = oddBackslashes(p[i:], t.backslash)
				return len(p)
			}
			q := i + j
			if !oddBackslashes(p[i:q], t.backslash) {
				t.skip, t.backslash = nil, false
				return q + 1
			}
			t.backslash = false
			i = q + 1
		}
		return len(p)
	}
	// `\"`: its end is the next `\"` (a value with an escaped quote or
	// backslash inside loses the rest of it: redacted all the same).
	t.pend = append(t.pend, p...)
	if i := bytes.Index(t.pend, t.skip); i >= 0 {
		n := len(p) - (len(t.pend) - (i + len(t.skip)))
		t.pend, t.skip = t.pend[:0], nil
		return n
	}
	keep := min(len(t.pend), len(t.skip)-1) // a `\` that may start the end
	copy(t.pend, t.pend[len(t.pend)-keep:])
	t.pend = t.pend[:keep]
	return len(p)
}

// redact passes on the redacted text of pend up to where what follows
// may still change it (all of it when final), keeping the rest.
func (t *TextRedactor) redact(final bool) {
	b := t.pend
	cut := len(b)
	if !final {
		cut = len(b) - streamCarry
		for k := 0; k < utf8.UTFMax && cut > 0 && !utf8.RuneStart(b[cut]); k++ {
			cut-- // a character is not cut in half
		}
	}
	spans := streamSpans(b)
	for _, sp := range spans {
		if sp.start >= cut && sp.key < cut {
			cut = sp.key // a pair stays whole: its key says its value is secret
		}
	}
	var out []byte
	copied := 0
	for _, sp := range spans {
		if sp.start < copied {
			continue // inside a span already redacted
		}
		if sp.start >= cut {
			break
		}
		touches := sp.end >= len(b) && !final
		if touches && sp.quote == nil && len(b)-sp.start < streamMaxSecret {
			cut = min(cut, sp.key) // what follows may lengthen it: held back, with what tells it
			break
		}
		out = append(out, b[copied:sp.start]...)
		out = append(out, sp.with...)
		copied = sp.end
		if sp.end > len(b) {
			// A secret value open at the end: its rest is dropped as it
			// comes, up to its closing quote.
			copied = len(b)
			t.skip = sp.quote
			t.backslash = sp.backslash
			break
		}
	}
	if copied < cut {
		out = append(out, b[copied:cut]...)
		copied = cut
	}
	if len(out) > 0 {
		t.err = t.emit(out)
	}
	if t.skip != nil {
		t.pend = t.pend[:0]
		return
	}
	n := copy(t.pend, b[copied:])
	t.pend = t.pend[:n]
}

// streamSpan is a secret in a streamed text: b[start:end] becomes with.
// end past len(b) marks a pair's value open at the end of b; quote is
// the quote that ends it, backslash whether the bytes of it seen end in
// an odd run of backslashes.
type streamSpan struct {
	start, end int
	key        int // where what makes it a secret starts: the pair's key, the shape's context
	with       []byte
	quote      []byte
	backslash  bool
}

var (
	plainQuote   = []byte(`"`)
	escapedQuote = []byte(`\"`)
	// redactedEscaped is Redacted inside a JSON string.
	redactedEscaped = []byte(`\"<redacted>\"`)
)

// streamSpans returns the secrets of b, by start: its shapes and the
// values of its secret pairs, plain and escaped once.
func streamSpans(b []byte) []streamSpan {
	var spans []streamSpan
	for _, sp := range findShapes(b, nil) {
		// What tells a shape may lie before it ("Bearer ", "://user:"):
		// kept with it when what is held back starts at it.
		key := max(0, sp.start-shapeContext)
		spans = append(spans, streamSpan{start: sp.start, end: sp.end, key: key, with: []byte(RedactedText)})
	}
	spans = secretPairs(b, plainQuote, []byte(Redacted), spans)
	spans = secretPairs(b, escapedQuote, redactedEscaped, spans)
	slices.SortFunc(spans, func(a, b streamSpan) int { return a.start - b.start })
	return spans
}

// secretPairs appends the values of the `qKEYq : qVALUEq` pairs of b
// whose key names a secret, q a quote (plain, or escaped once).
func secretPairs(b, q, with []byte, spans []streamSpan) []streamSpan {
	for i := 0; ; {
		k := bytes.Index(b[i:], q)
		if k < 0 {
			return spans
		}
		kstart := i + k
		kend, closed, _ := literalEnd(b, kstart, q)
		if !closed {
			return spans
		}
		v := skipStreamSpace(b, kend, len(q) > 1)
		if v >= len(b) || b[v] != ':' {
			i = kend - len(q) // its closing quote may open the next literal
			continue
		}
		v = skipStreamSpace(b, v+1, len(q) > 1)
		if !bytes.HasPrefix(b[v:], q) {
			i = v
			continue
		}
		vend, vclosed, odd := literalEnd(b, v, q)
		if isSecretKey(b[kstart+len(q):kend-len(q)]) && !bytes.Equal(b[v:vend], with) {
			sp := streamSpan{start: v, end: vend, key: kstart, with: with}
			if !vclosed {
				sp.end, sp.quote, sp.backslash = len(b)+1, q, odd
			}
			spans = append(spans, sp)
		}
		if !vclosed {
			return spans
		}
		// The value's closing quote may open the next literal: b may
		// start inside a string, so what looks like a value may be the
		// end of one and the start of the next.
		i = vend - len(q)
	}
}

// literalEnd returns the offset past the literal opening with q at b[i],
// whether it closes within b, and for an open plain one whether it ends in
// an odd run of backslashes.
func literalEnd(b []byte, i int, q []byte) (end int, closed, odd bool) {
	i += len(q)
	if len(q) > 1 {
		j := bytes.Index(b[i:], q)
		if j < 0 {
			return len(b), false, false
		}
		return i + j + len(q), true, false
	}
	for {
		j := bytes.IndexByte(b[i:], '"')
		if j < 0 {
			return len(b), false, oddBackslashes(b[i:], false)
		}
		if !oddBackslashes(b[i:i+j], false) {
			return i + j + 1, true, false
		}
		i += j + 1
	}
}

// skipStreamSpace skips JSON white space, and when escaped, its escaped
// spellings too (`\n`, `\t`, `\r`).
func skipStreamSpace(b []byte, i int, escaped bool) int {
	for i < len(b) {
		switch {
		case isSpace(b[i]):
			i++
		case escaped && b[i] == '\\' && i+1 < len(b) && (b[i+1] == 'n' || b[i+1] == 't' || b[i+1] == 'r'):
			i += 2
		default:
			return i
		}
	}
	return i
}

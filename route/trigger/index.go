package trigger

import (
	"bytes"

	"github.com/acp-normalize/acp-normalize/rewrite"
)

// Index finds which modules of a list a frame triggers, in one pass
// over the frame.
//
// Checking each trigger with bytes.Contains costs a scan per trigger, and
// a trigger that starts with '"' (as most do: a quote cannot occur
// unescaped inside a JSON string, so such a trigger never matches chat
// text) stops at every quote of the frame. The index instead visits each
// quote once and looks the two bytes after it up in a table of the quoted
// triggers' openings; only those few candidates are compared.
// Triggers that do not start with '"', or are shorter than three bytes,
// are checked with bytes.Contains.
type Index struct {
	plain []trigger
	// group maps the two bytes after a quote to 1 + the index in groups
	// of the quoted triggers opening with them; 0 is none, spelledGroup
	// two bytes with a backslash (spelled.go). A table, not a
	// map: it is consulted at every quote of every frame.
	group  [1 << 16]uint8
	groups [][]trigger
	all    uint64 // the bits of every module with a trigger
	// std are the standard methods, for the modules that asked for
	// unknown methods (Module.UnknownMethods).
	std rewrite.MethodFilter
	// longest is the length of the longest quoted trigger.
	longest int
	// reach is how far past a quote the scan reads to decide about it:
	// the longest quoted trigger, and what the check for other
	// spellings reads (spellReach).
	reach int
	// spelled: some quoted trigger is looked for in other spellings too.
	spelled bool
	// hasMethod: the method trigger is indexed (it reads past its end).
	hasMethod bool
	// gen numbers the router's indexes of one connection: a memo made
	// with another index starts over (its triggers may differ).
	gen uint64
}

// Gen is the index's number among the router's indexes of one
// connection (see Memo).
func (x *Index) Gen() uint64 { return x.gen }

// Reach is how many bytes from a quote on a match may depend on: a scan
// of a stream in pieces overlaps the pieces by this much, so that a
// trigger split across two of them still matches.
func (x *Index) Reach() int { return x.reach }

// SetGen numbers the index: a memo made with an index of another number
// starts over, since its triggers may differ.
func (x *Index) SetGen(gen uint64) { x.gen = gen }

type trigger struct {
	pat []byte
	bit uint64 // the modules it triggers (several for the method trigger)
	// method marks the "method" trigger of Module.UnknownMethods: it
	// matches only when the string after it is an unknown method.
	method bool
	// toks are pat's JSON tokens, for finding its other spellings
	// (spelled.go); nil for a trigger found by its bytes only.
	toks []token
}

// spelledGroup marks, in Index.group, the two bytes after a quote
// that hold a backslash; maxGroups is how many groups the table holds
// besides.
const (
	spelledGroup = 255
	maxGroups    = 254
)

// methodKey is the trigger of Module.UnknownMethods.
const methodKey = `"method"`

// New indexes the triggers of mods; module i is bit i of
// Match's result. At most 64 modules, and less the bits given to Add.
func New(mods []rewrite.Module) *Index {
	x := &Index{}
	var unknown uint64
	for i, m := range mods {
		for _, t := range m.Triggers {
			x.Add(t, uint(i))
		}
		if m.UnknownMethods && i < 64 {
			unknown |= 1 << i
		}
	}
	if unknown != 0 {
		x.std = rewrite.NewMethodFilter()
		x.all |= unknown
		x.addQuoted(trigger{pat: []byte(methodKey), bit: unknown, method: true})
	}
	return x
}

// Add indexes one more trigger under bit n of Match's result; the proxy
// uses it for the strings it looks for itself.
func (x *Index) Add(t string, n uint) {
	if t == "" || n >= 64 {
		return
	}
	bit := uint64(1) << n
	x.all |= bit
	tr := trigger{pat: []byte(t), bit: bit}
	if len(t) < 3 || t[0] != '"' {
		x.plain = append(x.plain, tr)
		return
	}
	x.addQuoted(tr)
}

// addQuoted indexes a trigger that starts with a quote and has at least
// three bytes.
func (x *Index) addQuoted(tr trigger) {
	x.longest = max(x.longest, len(tr.pat))
	x.hasMethod = x.hasMethod || tr.method
	tr.toks = parseTrigger(string(tr.pat))
	if tr.toks != nil && !x.spelled {
		x.spelled = true
		x.reach = max(x.reach, spellReach)
		// A string whose first two bytes hold a backslash may spell a
		// trigger with an escape: the table sends those quotes to
		// matchSpelled, at no cost to any other quote.
		for c := range 256 {
			for _, key := range []uint16{'\\'<<8 | uint16(c), uint16(c)<<8 | '\\'} {
				if x.group[key] == 0 {
					x.group[key] = spelledGroup
				}
			}
		}
	}
	x.reach = max(x.reach, x.longest)
	key := uint16(tr.pat[1])<<8 | uint16(tr.pat[2])
	if x.group[key] == spelledGroup {
		x.plain = append(x.plain, tr) // a trigger with a backslash: its bytes only
		return
	}
	if x.group[key] == 0 {
		if len(x.groups) == maxGroups {
			x.plain = append(x.plain, tr) // table full: checked the slow way
			return
		}
		x.groups = append(x.groups, nil)
		x.group[key] = uint8(len(x.groups))
	}
	g := x.group[key] - 1
	x.groups[g] = append(x.groups[g], tr)
}

// Match returns the set of modules (bit i for module i) with a trigger
// that frame contains: a plain trigger's bytes, a quoted trigger in any
// spelling a JSON parser reads the same (spelled.go).
func (x *Index) Match(frame []byte) uint64 { return x.matchFrom(frame, 0, nil) }

// matchFrom is Match, with the quoted triggers looked for only at offsets
// from on; note, when set, gets the offset of the first quote where other
// spellings were looked for (noteCandidate).
func (x *Index) matchFrom(frame []byte, from int, note *int) uint64 {
	var mask uint64
	for _, t := range x.plain {
		if mask&t.bit == 0 && bytes.Contains(frame, t.pat) {
			mask |= t.bit
		}
	}
	if len(x.groups) == 0 {
		return mask
	}
	for i := from; mask != x.all; i++ {
		j := bytes.IndexByte(frame[i:], '"')
		if j < 0 {
			break
		}
		i += j
		if i+2 >= len(frame) {
			break
		}
		if g := x.group[uint16(frame[i+1])<<8|uint16(frame[i+2])]; g != 0 {
			mask = x.matchGroup(frame, i, g, mask, -1, note)
		}
	}
	return mask
}

// matchGroup compares the triggers of group g with the frame at the quote
// frame[i]: their bytes (only those ending past minEnd, but the method
// trigger's), and, after a structural quote, their other spellings where
// the frame may hold one: an escape among a one-string trigger's bytes,
// or, for a trigger of several tokens, an escape or a blank where the
// frame first differs from it. Those quotes are candidates
// (noteCandidate); any other costs one search for a backslash within the
// longest trigger's length. For spelledGroup (an escape in the string's
// first two characters) the string's characters are decoded instead.
func (x *Index) matchGroup(frame []byte, i int, g uint8, mask uint64, minEnd int, note *int) uint64 {
	if g == spelledGroup {
		if structural(frame, i) {
			mask = x.matchSpelled(frame, i, mask, note)
		}
		return mask
	}
	esc := -2 // the first backslash after the quote within the longest trigger, -1 none; -2 not looked for
	for _, t := range x.groups[g-1] {
		if mask&t.bit == t.bit {
			continue
		}
		if bytes.HasPrefix(frame[i:], t.pat) {
			if (t.method || i+len(t.pat) > minEnd) && (!t.method || x.unknownMethodAt(frame[i+len(t.pat):])) {
				mask |= t.bit
			}
			continue
		}
		if t.toks == nil {
			continue
		}
		if len(t.toks) == 1 {
			if esc == -2 {
				esc = bytes.IndexByte(frame[i+1:min(len(frame), i+x.longest)], '\\')
			}
			if esc < 0 || esc+1 >= len(t.pat) {
				continue // no escape where the trigger's characters are
			}
		} else if n := commonPrefix(frame[i:], t.pat); i+n >= len(frame) || (frame[i+n] != '\\' && !isBlank(frame[i+n])) {
			continue
		}
		if !structural(frame, i) {
			continue
		}
		noteCandidate(note, i)
		if end, ok := spelledAt(frame, i, t.toks); ok && (!t.method || x.unknownMethodAt(frame[end:])) {
			mask |= t.bit
		}
	}
	return mask
}

// isBlank reports whether c is JSON white space.
func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// unknownMethodAt reports whether rest, the bytes after a "method" key,
// holds ": <string>" whose string is an unknown method (see
// Module.UnknownMethods). A string with an escape counts as unknown: the
// module decodes it. A "method" that is no key, or whose value is no
// string, is none.
func (x *Index) unknownMethodAt(rest []byte) bool {
	i := skipSpace(rest, 0)
	if i >= len(rest) || rest[i] != ':' {
		return false
	}
	i = skipSpace(rest, i+1)
	if i >= len(rest) || rest[i] != '"' {
		return false
	}
	body := rest[i+1:]
	end := bytes.IndexByte(body, '"')
	if end < 0 {
		return false
	}
	if bytes.IndexByte(body[:end], '\\') >= 0 {
		return true
	}
	return x.std.UnknownBytes(body[:end])
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

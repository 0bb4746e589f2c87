package rewrite

import (
	"bytes"
)

// TriggerIndex finds which modules of a list a frame triggers, in one pass
// over the frame.
//
// Checking each trigger with bytes.Contains costs a scan per trigger, and
// a trigger that starts with '"' (as most do: a quote cannot occur
// unescaped inside a JSON string, so such a trigger never matches chat
// text) stops at every quote of the frame. The index instead visits each
// quote once and looks the two bytes after it up in a bitmap of the
// quoted triggers' openings; only those few candidates are compared.
// Triggers that do not start with '"', or are shorter than three bytes,
// are checked with bytes.Contains.
type TriggerIndex struct {
	plain   []trigger
	opening [1 << 16 / 64]uint64 // bit set: some quoted trigger opens with these two bytes
	quoted  map[uint16][]trigger
	all     uint64 // the bits of every module with a trigger
}

type trigger struct {
	pat []byte
	bit uint64
}

// NewTriggerIndex indexes the triggers of mods; module i is bit i of
// Match's result. At most 64 modules.
func NewTriggerIndex(mods []Module) *TriggerIndex {
	x := &TriggerIndex{quoted: make(map[uint16][]trigger)}
	for i, m := range mods {
		bit := uint64(1) << i
		for _, t := range m.Triggers {
			if t == "" {
				continue
			}
			x.all |= bit
			tr := trigger{pat: []byte(t), bit: bit}
			if len(t) < 3 || t[0] != '"' {
				x.plain = append(x.plain, tr)
				continue
			}
			key := uint16(t[1])<<8 | uint16(t[2])
			x.opening[key/64] |= 1 << (key % 64)
			x.quoted[key] = append(x.quoted[key], tr)
		}
	}
	return x
}

// Match returns the set of modules (bit i for module i) with a trigger
// that frame contains.
func (x *TriggerIndex) Match(frame []byte) uint64 {
	var mask uint64
	for _, t := range x.plain {
		if mask&t.bit == 0 && bytes.Contains(frame, t.pat) {
			mask |= t.bit
		}
	}
	if len(x.quoted) == 0 {
		return mask
	}
	for i := 0; mask != x.all; i++ {
		j := bytes.IndexByte(frame[i:], '"')
		if j < 0 {
			break
		}
		i += j
		if i+2 >= len(frame) {
			break
		}
		key := uint16(frame[i+1])<<8 | uint16(frame[i+2])
		if x.opening[key/64]&(1<<(key%64)) == 0 {
			continue
		}
		for _, t := range x.quoted[key] {
			if mask&t.bit == 0 && bytes.HasPrefix(frame[i:], t.pat) {
				mask |= t.bit
			}
		}
	}
	return mask
}

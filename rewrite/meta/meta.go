package meta

import (
	"fmt"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
)

// Key is the _meta key of everything the proxy adds (rule M).
const Key = "acp-normalize"

// Members of the Key object.
const (
	// SubagentMember holds the Subagent snapshot of a launch call.
	SubagentMember = "subagent"
	// ParentMember holds the launch call's toolCallId on a frame a
	// subagent produced.
	ParentMember = "parentToolCallId"
)

// Set returns frame with _meta[Key][member] of the object at obj (a path
// of keys from the frame's top, such as "params", "update") set to the
// raw JSON value. A _meta that is missing is created; one that is not an
// object is replaced by {Key: {member: value}}; the vendor's other _meta
// keys, and every other byte of frame, are kept. Key is the proxy's: what
// the frame already holds there is overwritten, never passed on as ours
// (a forged snapshot reached the client) — a member of the same
// name is replaced, and a _meta[Key] that is not an object becomes
// {member: value}. A nested proxy's own additions are not at risk: the
// outer proxy turns off the modules the inner one advertises (rule M).
func Set(frame []byte, value []byte, member string, obj ...string) ([]byte, error) {
	e, err := Edit(frame, value, member, obj...)
	if err != nil {
		return nil, err
	}
	return rawjson.SetAll(frame, e)
}

// Edit returns the edit Set makes, for a caller that applies several
// edits to a frame in one copy (rawjson.SetAll).
func Edit(frame []byte, value []byte, member string, obj ...string) (rawjson.Edit, error) {
	metaPath := append(append(make([]string, 0, len(obj)+3), obj...), "_meta")
	m, ok := rawjson.Lookup(frame, metaPath...)
	if ok && rawjson.FirstByte(m) != '{' {
		return rawjson.Edit{Path: metaPath, Value: Object(member, value)}, nil
	}
	if k, ok := rawjson.Lookup(m, Key); ok && rawjson.FirstByte(k) != '{' {
		return rawjson.Edit{Path: append(metaPath, Key), Value: memberObject(member, value)}, nil
	}
	return rawjson.Edit{Path: append(metaPath, Key, member), Value: value}, nil
}

// SubagentEdit returns the edit SetSubagent makes.
func SubagentEdit(frame []byte, s *Subagent, obj ...string) (rawjson.Edit, error) {
	e, err := Edit(frame, s.JSON(), SubagentMember, obj...)
	if err != nil {
		return e, fmt.Errorf("adding the subagent snapshot: %w", err)
	}
	return e, nil
}

// SetSubagent puts the snapshot s at _meta[Key].subagent of the object at
// obj (rule M).
func SetSubagent(frame []byte, s *Subagent, obj ...string) ([]byte, error) {
	out, err := Set(frame, s.JSON(), SubagentMember, obj...)
	if err != nil {
		return nil, fmt.Errorf("adding the subagent snapshot: %w", err)
	}
	return out, nil
}

// SetParent puts the raw JSON string parent (the vendor's own bytes) at
// _meta[Key].parentToolCallId of the object at obj.
func SetParent(frame []byte, parent []byte, obj ...string) ([]byte, error) {
	out, err := Set(frame, parent, ParentMember, obj...)
	if err != nil {
		return nil, fmt.Errorf("adding parentToolCallId: %w", err)
	}
	return out, nil
}

// memberObject returns {member: value}.
func memberObject(member string, value []byte) []byte {
	out := make([]byte, 0, len(member)+len(value)+5)
	out = append(rawjson.AppendString(append(out, '{'), member), ':')
	return append(append(out, value...), '}')
}

// Object returns the _meta value {Key: {member: value}} for a frame the
// proxy builds.
func Object(member string, value []byte) []byte {
	out := make([]byte, 0, len(Key)+len(member)+len(value)+12)
	out = append(out, '{')
	out = rawjson.AppendString(out, Key)
	out = append(out, ':', '{')
	out = rawjson.AppendString(out, member)
	out = append(out, ':')
	out = append(out, value...)
	return append(out, '}', '}')
}

package meta

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
)

// ParseSubagent reads a snapshot as Subagent.JSON writes it, so that a
// module that works on what the vendor modules made of a frame (the
// sessions module: rules S4, S6, S8) can fill in or move forward what
// they said and write it back in the same order. A member of an
// unexpected type is an error (the caller fails open, P5); an unknown
// member too, since writing the snapshot back would lose it.
func ParseSubagent(raw []byte) (*Subagent, error) {
	if rawjson.FirstByte(raw) != '{' || !json.Valid(raw) {
		return nil, errors.New("snapshot is not a JSON object")
	}
	s := &Subagent{}
	var errs []error
	text := func(k string, v []byte) *string {
		t, ok := rawjson.DecodeString(v)
		if !ok {
			errs = append(errs, fmt.Errorf("snapshot %s is not a string", k))
			return nil
		}
		return &t
	}
	number := func(k string, v []byte) json.RawMessage {
		if c := rawjson.FirstByte(v); c != '-' && (c < '0' || c > '9') {
			errs = append(errs, fmt.Errorf("snapshot %s is not a number", k))
			return nil
		}
		return bytes.Clone(v)
	}
	err := rawjson.Members(raw, func(m rawjson.Member) bool {
		k, ok := rawjson.UnescapeKey(m.Key)
		if !ok {
			errs = append(errs, errors.New("snapshot key is not a string"))
			return false
		}
		v := m.Value
		switch k {
		case "vendor":
			if p := text(k, v); p != nil {
				s.Vendor = *p
			}
		case "toolName":
			if p := text(k, v); p != nil {
				s.ToolName = *p
			}
		case "status":
			if p := text(k, v); p != nil {
				s.Status = Status(*p)
			}
		case "description":
			s.Description = text(k, v)
		case "prompt":
			s.Prompt = text(k, v)
		case "subagentType":
			s.SubagentType = text(k, v)
		case "model":
			s.Model = text(k, v)
		case "agentId":
			s.AgentID = text(k, v)
		case "resultText":
			s.ResultText = text(k, v)
		case "outputFile":
			s.OutputFile = text(k, v)
		case "resolvedModel":
			s.ResolvedModel = text(k, v)
		case "effort":
			s.Effort = text(k, v)
		case "name":
			s.Name = text(k, v)
		case "childSessionId":
			s.ChildSessionID = text(k, v)
		case "background":
			switch string(v) {
			case "true", "false":
				b := string(v) == "true"
				s.Background = &b
			default:
				errs = append(errs, errors.New("snapshot background is not a boolean"))
			}
		case "durationMs":
			s.DurationMs = number(k, v)
		case "totalTokens":
			s.TotalTokens = number(k, v)
		case "toolUseCount":
			s.ToolUseCount = number(k, v)
		case "raw":
			if rawjson.FirstByte(v) != '{' {
				errs = append(errs, errors.New("snapshot raw is not an object"))
				return true
			}
			s.Raw = map[string]json.RawMessage{}
			_ = rawjson.Members(v, func(rm rawjson.Member) bool {
				if rk, ok := rawjson.UnescapeKey(rm.Key); ok {
					s.Raw[rk] = bytes.Clone(rm.Value)
				}
				return true
			})
		default:
			errs = append(errs, fmt.Errorf("snapshot member %q is unknown", k))
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return s, nil
}

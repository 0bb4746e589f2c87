package driver

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// rpcError is a JSON-RPC error answer.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// answer replies to one agent->client request.
func (s *session) answer(id []byte, method string, frame []byte) {
	var req struct {
		Params json.RawMessage `json:"params"`
	}
	_ = json.Unmarshal(frame, &req)
	result, rerr := s.resultFor(method, req.Params)
	reply := response{JSONRPC: "2.0", ID: id}
	if rerr != nil {
		reply.Error = rerr
	} else {
		reply.Result = result
	}
	out, err := json.Marshal(reply)
	if err != nil {
		s.cfg.Log.Warn("encoding an answer", "method", method, "err", err)
		return
	}
	if err := s.send(out); err != nil {
		s.cfg.Log.Warn("answering", "method", method, "err", err)
	}
}

func (s *session) resultFor(method string, params json.RawMessage) (any, *rpcError) {
	if res, ok := s.cfg.Answers[method]; ok {
		return res, nil
	}
	switch method {
	case "session/request_permission":
		return permissionAnswer(params)
	case "fs/read_text_file":
		if s.cfg.ClientFS {
			return s.readTextFile(params)
		}
	case "fs/write_text_file":
		if s.cfg.ClientFS {
			return s.writeTextFile(params)
		}
	}
	return nil, &rpcError{Code: -32601, Message: "Method not found"}
}

// permissionAnswer selects an allow option: allow_once first, then
// allow_always, then the first option.
func permissionAnswer(params json.RawMessage) (any, *rpcError) {
	var p struct {
		Options []struct {
			OptionID string `json:"optionId"`
			Kind     string `json:"kind"`
		} `json:"options"`
	}
	if err := json.Unmarshal(params, &p); err != nil || len(p.Options) == 0 {
		return nil, &rpcError{Code: -32602, Message: "no permission options"}
	}
	choice := p.Options[0].OptionID
	for _, kind := range []string{"allow_always", "allow_once"} {
		for _, o := range p.Options {
			if o.Kind == kind {
				choice = o.OptionID
			}
		}
	}
	return permissionOutcome{Outcome: selectedOption{Outcome: "selected", OptionID: choice}}, nil
}

// inWorkspace resolves path and checks it lies in the workspace.
func (s *session) inWorkspace(path string) (string, *rpcError) {
	clean := filepath.Clean(path)
	root := filepath.Clean(s.cfg.Workspace)
	if !filepath.IsAbs(clean) || (clean != root && !strings.HasPrefix(clean, root+string(filepath.Separator))) {
		return "", &rpcError{Code: -32602, Message: fmt.Sprintf("path outside the workspace: %s", path)}
	}
	return clean, nil
}

func (s *session) readTextFile(params json.RawMessage) (any, *rpcError) {
	var p struct {
		Path  string `json:"path"`
		Line  *int   `json:"line"`
		Limit *int   `json:"limit"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, &rpcError{Code: -32602, Message: err.Error()}
	}
	path, rerr := s.inWorkspace(p.Path)
	if rerr != nil {
		return nil, rerr
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &rpcError{Code: -32603, Message: fmt.Sprintf("reading %s: no such file", filepath.Base(path))}
	}
	content := string(data)
	if p.Line != nil || p.Limit != nil {
		lines := strings.SplitAfter(content, "\n")
		start := 0
		if p.Line != nil && *p.Line > 1 {
			start = min(*p.Line-1, len(lines))
		}
		end := len(lines)
		if p.Limit != nil && start+*p.Limit < end {
			end = start + *p.Limit
		}
		content = strings.Join(lines[start:end], "")
	}
	return map[string]any{"content": content}, nil
}

func (s *session) writeTextFile(params json.RawMessage) (any, *rpcError) {
	var p struct {
		Path    string `json:"path"`
		Content string `json:"content"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, &rpcError{Code: -32602, Message: err.Error()}
	}
	path, rerr := s.inWorkspace(p.Path)
	if rerr != nil {
		return nil, rerr
	}
	if err := os.WriteFile(path, []byte(p.Content), 0o644); err != nil {
		return nil, &rpcError{Code: -32603, Message: fmt.Sprintf("writing %s failed", filepath.Base(path))}
	}
	return map[string]any{}, nil
}

package driver

import "encoding/json"

// The client's frames, as structs so that members go out in the order an
// editor would write them (jsonrpc, id, method, params).

type request struct {
	JSONRPC string `json:"jsonrpc"`
	ID      int    `json:"id"`
	Method  string `json:"method"`
	Params  any    `json:"params"`
}

type notification struct {
	JSONRPC string `json:"jsonrpc"`
	Method  string `json:"method"`
	Params  any    `json:"params"`
}

type cancelParams struct {
	SessionID string `json:"sessionId"`
}

type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

type initializeParams struct {
	ProtocolVersion    int                `json:"protocolVersion"`
	ClientCapabilities clientCapabilities `json:"clientCapabilities"`
	ClientInfo         implementation     `json:"clientInfo"`
}

type clientCapabilities struct {
	FS        fsCapabilities `json:"fs"`
	Terminal  bool           `json:"terminal"`
	Subagents *struct{}      `json:"subagents,omitempty"`
}

type fsCapabilities struct {
	ReadTextFile  bool `json:"readTextFile"`
	WriteTextFile bool `json:"writeTextFile"`
}

type implementation struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

type newSessionParams struct {
	CWD        string `json:"cwd"`
	MCPServers []any  `json:"mcpServers"`
}

type setModeParams struct {
	SessionID string `json:"sessionId"`
	ModeID    string `json:"modeId"`
}

type promptParams struct {
	SessionID string      `json:"sessionId"`
	Prompt    []textBlock `json:"prompt"`
}

type textBlock struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type permissionOutcome struct {
	Outcome selectedOption `json:"outcome"`
}

type selectedOption struct {
	Outcome  string `json:"outcome"`
	OptionID string `json:"optionId"`
}

package pipe

// Side names one end of the proxied connection.
type Side uint8

const (
	// Client is the editor (the proxy's own stdin/stdout).
	Client Side = iota + 1
	// Agent is the coding agent (the child process).
	Agent
)

// String returns "client" or "agent", the spelling used in captures.
func (s Side) String() string {
	switch s {
	case Client:
		return "client"
	case Agent:
		return "agent"
	}
	return "unknown"
}

// Other returns the opposite side.
func (s Side) Other() Side {
	if s == Client {
		return Agent
	}
	return Client
}

// ParseSide parses "client" or "agent".
func ParseSide(s string) (Side, bool) {
	switch s {
	case "client":
		return Client, true
	case "agent":
		return Agent, true
	}
	return 0, false
}

package pipe

// Side names one end of the proxied connection.
type Side uint8

const (
	// Client is the editor (the proxy's own stdin/stdout).
	Client Side = iota + 1
	// Agent is the coding agent (the child process).
	Agent
)

// sideNames are the sides' spellings in captures, for String and ParseSide.
var sideNames = [...]string{Client: "client", Agent: "agent"}

// String returns "client" or "agent", the spelling used in captures.
func (s Side) String() string {
	if s == Client || s == Agent {
		return sideNames[s]
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
	for side := Client; side <= Agent; side++ {
		if sideNames[side] == s {
			return side, true
		}
	}
	return 0, false
}

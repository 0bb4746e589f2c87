package rewritetest

import (
	"bytes"
	"fmt"
)

// AgentTraffic returns frames lines of typical agent output for
// benchmarks: message chunks, with a tool call and its completion every 50
// frames, as ACP agents write them. One frame per line, each ending "\n".
func AgentTraffic(frames int) []byte {
	var buf bytes.Buffer
	for i := range frames {
		switch i % 50 {
		case 0:
			fmt.Fprintf(&buf, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call","toolCallId":"tool_%d","title":"Read file","kind":"read","status":"pending","rawInput":{"path":"/src/main.go"}}}}`+"\n", i)
		case 1:
			fmt.Fprintf(&buf, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call_update","toolCallId":"tool_%d","status":"completed"}}}`+"\n", i-1)
		default:
			fmt.Fprintf(&buf, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"chunk %d of the answer, with \"quotes\" and <tags> & more text to make it realistic"}}}}`+"\n", i)
		}
	}
	return buf.Bytes()
}

// Chunk is one agent message chunk, the most common frame.
const Chunk = `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"chunk 2 of the answer, with \"quotes\" and <tags> & more text to make it realistic"}}}}`

package rewrite

import (
	"github.com/acp-normalize/acp-normalize/pipe"
)

// Verdict says what happens to a frame. The zero value forwards it
// unchanged.
type Verdict struct {
	// Frame, when non-nil, replaces the frame's bytes.
	Frame []byte
	// Drop removes the frame from the stream.
	Drop bool
	// Out lists frames and requests to send, in order, after the frame (or
	// in its place when it is dropped).
	Out []Output
}

// Output is a frame or a request sent because of a frame.
type Output struct {
	// To is the side it is written to.
	To pipe.Side
	// Frame is a complete frame; nil when Request is set.
	Frame []byte
	// Request is a request whose id the proxy assigns.
	Request *Request
}

// Request is a request the proxy sends on a module's behalf, under a string
// id "acp-normalize:<n>". Its response goes to the module's
// ResponseHandler with Cookie.
type Request struct {
	Method string
	// Params is the raw JSON of the params, or nil for none.
	Params []byte
	Cookie any
}

// Forwarded reports whether the verdict leaves the frame itself unchanged.
func (v *Verdict) Forwarded() bool { return v.Frame == nil && !v.Drop }

// Replace makes the verdict replace the frame with frame.
func (v *Verdict) Replace(frame []byte) { v.Frame, v.Drop = frame, false }

// DropFrame makes the verdict drop the frame.
func (v *Verdict) DropFrame() { v.Frame, v.Drop = nil, true }

// Send appends a frame written to side to.
func (v *Verdict) Send(to pipe.Side, frame []byte) {
	v.Out = append(v.Out, Output{To: to, Frame: frame})
}

// SendRequest appends a request to side to.
func (v *Verdict) SendRequest(to pipe.Side, method string, params []byte, cookie any) {
	v.Out = append(v.Out, Output{To: to, Request: &Request{Method: method, Params: params, Cookie: cookie}})
}

package routetest

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/route"
)

// FuzzAgentFrames is a vendor module's main fuzz target (Fuzz<Vendor>):
// the seeds, and every frame the fuzzer makes of them, go through
// CheckAgentFrames after the initialize result, in the frames session
// returns for them (frame itself among them, with the frames that give
// it the module's context: a launch call, a later update).
func FuzzAgentFrames(f *testing.F, mod rewrite.Module, result []byte, seeds []string, session func(frame []byte) [][]byte) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, frame []byte) {
		CheckAgentFrames(t, mod, result, session(frame)...)
	})
}

// CheckAgentFrames is the body of a vendor module's fuzz target: a fresh
// Router with mod sees the client's initialize and the agent's
// initialize result (which names the vendor's agent), then the agent
// frames. The module must never panic (P5 turns errors into forwarding),
// never drop an object frame, forward a frame it leaves alone byte for
// byte (P1), and write only valid JSON for a valid JSON frame.
func CheckAgentFrames(t *testing.T, mod rewrite.Module, result []byte, frames ...[]byte) {
	t.Helper()
	r, err := route.NewRouter(route.RouterConfig{Modules: []rewrite.Module{mod}, Version: "0"})
	if err != nil {
		t.Fatal(err)
	}
	r.Handle(pipe.Client, []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`), nil)
	r.Handle(pipe.Agent, result, nil)
	for _, in := range frames {
		outs := r.Handle(pipe.Agent, in, nil)
		if json.Valid(in) && bytes.HasPrefix(in, []byte("{")) && len(outs) == 0 {
			t.Fatalf("frame dropped: %s", in)
		}
		for _, o := range outs {
			if o.Op == "" && o.To == pipe.Client && !bytes.Equal(o.Frame, in) {
				t.Fatalf("P1: a forwarded frame changed:\n%s\n%s", in, o.Frame)
			}
			if json.Valid(in) && !json.Valid(o.Frame) {
				t.Fatalf("invalid JSON written for %s:\n%s", in, o.Frame)
			}
		}
	}
}

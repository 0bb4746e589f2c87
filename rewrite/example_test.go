package rewrite_test

import (
	"fmt"

	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite"
)

// A vendor module is a declaration: its name, a one-line doc, the byte
// strings that hand it a frame (a frame containing none of them skips the
// module undecoded, P1), its own options, and a constructor of its state
// for one connection. This one answers an imaginary agent's acme/ping
// request itself, unless --acme-forward-ping is set; the proxy lists it in
// cmd/acp-normalize/modules.go.
func ExampleModule() {
	m := rewrite.Module{
		Name:     "acme",
		Doc:      "answers Acme's acme/ping itself (an example)",
		Triggers: []string{`"acme/ping"`},
		Options:  []rewrite.Option{{Name: "acme-forward-ping", Usage: "pass acme/ping to the client"}},
		New: func(env rewrite.Env) rewrite.Rewriter {
			return &pinger{forward: env.Settings.Bool("acme-forward-ping")}
		},
	}
	if err := rewrite.Validate([]rewrite.Module{m}); err != nil {
		fmt.Println(err)
		return
	}

	// The router calls Rewrite for every frame that holds a trigger.
	rw := m.New(rewrite.Env{})
	ping := []byte(`{"jsonrpc":"2.0","id":7,"method":"acme/ping"}`)
	v, err := rw.Rewrite(rewrite.NewFrame(pipe.Agent, ping, 1))
	fmt.Println("dropped:", v.Drop, "error:", err)
	for _, o := range v.Out {
		fmt.Println("to", o.To, string(o.Frame))
	}

	forwarding := m.New(rewrite.Env{Settings: rewrite.Settings{"acme-forward-ping": "true"}})
	v, _ = forwarding.Rewrite(rewrite.NewFrame(pipe.Agent, ping, 1))
	fmt.Println("forwarded:", v.Forwarded())
	// Output:
	// dropped: true error: <nil>
	// to agent {"jsonrpc":"2.0","id":7,"result":{}}
	// forwarded: true
}

// pinger is the example module's state for one connection.
type pinger struct{ forward bool }

var _ rewrite.Rewriter = (*pinger)(nil)

func (p *pinger) Rewrite(f *rewrite.Frame) (rewrite.Verdict, error) {
	var v rewrite.Verdict // the zero verdict forwards the frame as read
	if p.forward || f.From != pipe.Agent || f.Kind() != pipe.Request || f.Method() != "acme/ping" {
		return v, nil
	}
	answer, err := rewrite.Result(f.ID(), map[string]any{})
	if err != nil {
		return v, err // the router logs it and forwards the frame (P5)
	}
	v.DropFrame()
	v.Send(pipe.Agent, answer)
	return v, nil
}

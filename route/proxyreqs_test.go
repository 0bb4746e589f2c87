package route

import (
	"fmt"
	"strings"
	"testing"

	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite"
)

// TestRouterP6ProxyRequestsBounded: a client that never answers the
// proxy's own requests (C12) cannot make the router hold them without a
// bound (P6: all state is bounded). Past 1,024 outstanding, the oldest is
// forgotten as if the client had answered it with an error: its module
// hears so (here: the agent's request gets its answer instead of waiting
// for good) and lets go of what it held for it. A late answer to it is
// then forwarded, like any answer to no outstanding proxy request.
func TestRouterP6ProxyRequestsBounded(t *testing.T) {
	r, err := NewRouter(RouterConfig{Modules: []rewrite.Module{newTestModule()}, IDToken: "t1"})
	if err != nil {
		t.Fatal(err)
	}
	const asks = 3000
	answered := map[string]bool{}
	for i := 1; i <= asks; i++ {
		for _, o := range r.Handle(pipe.Agent, fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"test/ask"}`, i), nil) {
			if o.To == pipe.Agent {
				answered[string(pipe.Peek(o.Frame).ID)] = true
			}
		}
	}
	if n := len(r.proxyReqs); n > 1024 {
		t.Fatalf("router holds %d outstanding proxy requests after %d unanswered asks; want at most 1024 (P6)", n, asks)
	}
	for i := 1; i <= asks-1024; i++ {
		if !answered[fmt.Sprint(i)] {
			t.Fatalf("agent request %d: its proxy request was forgotten, but the module never heard (the agent waits for good)", i)
		}
	}
	// The newest are still the proxy's: their answers are consumed.
	out := r.Handle(pipe.Client, fmt.Appendf(nil, `{"jsonrpc":"2.0","id":"acp-normalize:t1:%d","result":{"a":1}}`, asks), nil)
	if len(out) != 1 || out[0].To != pipe.Agent || !strings.Contains(string(out[0].Frame), fmt.Sprintf(`"id":%d`, asks)) {
		t.Fatalf("answer to the newest proxy request: %v", out)
	}
	// A late answer to a forgotten one is forwarded (C12).
	out = r.Handle(pipe.Client, []byte(`{"jsonrpc":"2.0","id":"acp-normalize:t1:1","result":{"a":1}}`), nil)
	if len(out) != 1 || out[0].To != pipe.Agent || out[0].Op != "" {
		t.Fatalf("late answer to a forgotten proxy request: %+v; want it forwarded", out)
	}
}

// TestRouterP6ProxyOrderBounded: the order the proxy keeps of its
// requests (to forget the oldest first) does not grow with the requests
// that were answered: a long session of answered permission requests.
func TestRouterP6ProxyOrderBounded(t *testing.T) {
	r, err := NewRouter(RouterConfig{Modules: []rewrite.Module{newTestModule()}, IDToken: "t1"})
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 5000; i++ {
		r.Handle(pipe.Agent, fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"test/ask"}`, i), nil)
		out := r.Handle(pipe.Client, fmt.Appendf(nil, `{"jsonrpc":"2.0","id":"acp-normalize:t1:%d","result":{}}`, i), nil)
		if len(out) != 1 || out[0].Op != pipe.OpEmit {
			t.Fatalf("answer %d not consumed: %+v", i, out)
		}
	}
	if n := len(r.proxyOrder); n > 2*len(r.proxyReqs)+64 {
		t.Fatalf("proxyOrder holds %d keys for %d open requests", n, len(r.proxyReqs))
	}
}

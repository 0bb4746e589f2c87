package rewrite

import (
	"encoding/json"
	"testing"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/acp-normalize/acp-normalize/pipe"
)

func TestFrameBuilders(t *testing.T) {
	res, err := Result([]byte(`-3`), map[string]any{"html": "<a>&"})
	if err != nil {
		t.Fatal(err)
	}
	if string(res) != `{"jsonrpc":"2.0","id":-3,"result":{"html":"<a>&"}}` {
		t.Fatalf("Result = %s", res)
	}
	if res, _ := Result(nil, []byte(`{}`)); string(res) != `{"jsonrpc":"2.0","id":null,"result":{}}` {
		t.Fatalf("Result without an id = %s", res)
	}
	if got := ErrorResponse([]byte(`"x"`), jsonrpc2.CodeMethodNotFound, "method not found"); string(got) != `{"jsonrpc":"2.0","id":"x","error":{"code":-32601,"message":"method not found"}}` {
		t.Fatalf("ErrorResponse = %s", got)
	}
	n, err := Notification("session/update", json.RawMessage(`{"a":1}`))
	if err != nil || string(n) != `{"jsonrpc":"2.0","method":"session/update","params":{"a":1}}` {
		t.Fatalf("Notification = %s, %v", n, err)
	}
	if id := ProxyID("3f9a", 12); string(id) != `"acp-normalize:3f9a:12"` {
		t.Fatalf("ProxyID with a token = %s", id)
	}
	id := ProxyID("", 7)
	r, err := RequestFrame(id, "session/request_permission", nil)
	if err != nil || string(r) != `{"jsonrpc":"2.0","id":"acp-normalize:7","method":"session/request_permission"}` {
		t.Fatalf("RequestFrame = %s, %v", r, err)
	}
	if env := pipe.Peek(r); env.Kind != pipe.Request {
		t.Fatalf("request frame peeks as %v", env.Kind)
	}
}

func TestValidate(t *testing.T) {
	ok := Module{Name: "m", Doc: "d", Triggers: []string{"x"}, New: func(Env) Rewriter { return nil }}
	if err := Validate([]Module{ok}); err != nil {
		t.Fatal(err)
	}
	bad := []struct {
		name string
		mods []Module
	}{
		{"bad name", []Module{{Name: "Bad Name", Doc: "d", Triggers: []string{"x"}, New: ok.New}}},
		{"duplicate", []Module{ok, ok}},
		{"no doc", []Module{{Name: "m", Triggers: []string{"x"}, New: ok.New}}},
		{"no triggers", []Module{{Name: "m", Doc: "d", New: ok.New}}},
		{"empty trigger", []Module{{Name: "m", Doc: "d", Triggers: []string{""}, New: ok.New}}},
		{"no constructor", []Module{{Name: "m", Doc: "d", Triggers: []string{"x"}}}},
		{"quoted trigger with an escape", []Module{{Name: "m", Doc: "d", Triggers: []string{`"a\u0062"`}, New: ok.New}}},
		{"quoted trigger with a blank", []Module{{Name: "m", Doc: "d", Triggers: []string{`"a": "b"`}, New: ok.New}}},
		{"quoted trigger with a literal", []Module{{Name: "m", Doc: "d", Triggers: []string{`"a":true`}, New: ok.New}}},
	}
	good := Module{Name: "m", Doc: "d", Triggers: []string{`"a":"b`, `"a":{"b":[`, `"a b"`}, New: ok.New}
	if err := Validate([]Module{good}); err != nil {
		t.Fatalf("Validate refused compact JSON text triggers: %v", err)
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			if Validate(tt.mods) == nil {
				t.Fatal("Validate accepted it")
			}
		})
	}
}

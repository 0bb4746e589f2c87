package pipe

import (
	"encoding/json"
	"testing"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
)

func TestPeek(t *testing.T) {
	tests := []struct {
		name   string
		frame  string
		kind   Kind
		method string
		id     string
		isErr  bool
	}{
		{"request", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"a":[1,{"b":"}"}]}}`, Request, "initialize", "1", false},
		{"request id after params", `{"jsonrpc":"2.0","method":"cursor/task","params":{"id":"inner"},"id":0}`, Request, "cursor/task", "0", false},
		{"string id", `{"id":"a\"b","method":"m"}`, Request, "m", `"a\"b"`, false},
		{"negative id kept raw", `{"id":-7,"method":"m"}`, Request, "m", "-7", false},
		{"null id is a request", `{"id":null,"method":"m"}`, Request, "m", "null", false},
		{"float id raw", `{"id":1.50,"method":"m"}`, Request, "m", "1.50", false},
		{"notification", `{"jsonrpc":"2.0","method":"session/update","params":{"update":{"id":3}}}`, Notification, "session/update", "", false},
		{"response result", `{"jsonrpc":"2.0","id":2,"result":{"method":"not me"}}`, Response, "", "2", false},
		{"response null result", `{"jsonrpc":"2.0","id":2,"result":null}`, Response, "", "2", false},
		{"response error", `{"jsonrpc":"2.0","id":"x","error":{"code":-32601,"message":"m"}}`, Response, "", `"x"`, true},
		{"spaces everywhere", " { \"id\" : 5 , \"method\" : \"m\" } ", Request, "m", "5", false},
		{"batch", `[{"id":1,"method":"m"}]`, Batch, "", "", false},
		{"not json", `Using worktree: /tmp`, NotJSON, "", "", false},
		{"empty object", `{}`, Invalid, "", "", false},
		{"truncated", `{"id":1,"method":"m"`, Invalid, "", "", false},
		{"trailing garbage", `{"id":1,"method":"m"}x`, Invalid, "", "", false},
		{"unterminated string", `{"id":1,"method":"m}`, Invalid, "", "", false},
		{"method not a string", `{"id":1,"method":5}`, Invalid, "", "", false},
		{"escaped backslash before quote", `{"method":"a\\","id":2}`, Request, `a\`, "2", false},
		// What a parser reads the same is the same.
		{"escaped method decoded", `{"method":"session\/update"}`, Notification, "session/update", "", false},
		{"escaped keys", `{"m\u0065thod":"m","\u0069d":3}`, Request, "m", "3", false},
		{"escaped result key", `{"id":1,"r\u0065sult":{}}`, Response, "", "1", false},
		{"escaped error key", `{"id":1,"\u0065rror":{}}`, Response, "", "1", true},
		{"last duplicate method wins", `{"method":"a","id":1,"method":"b"}`, Request, "b", "1", false},
		{"a last method that is no string", `{"method":"a","method":5}`, Invalid, "", "", false},
		{"method with a bad escape", `{"method":"a\q"}`, Invalid, "", "", false},
		{"response without id", `{"result":1}`, Invalid, "", "", false},
		{"id that is no JSON value", `{"id":00,"method":"m"}`, Invalid, "", "", false},
		{"id with a bad escape", `{"id":"\x","method":"m"}`, Invalid, "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := Peek([]byte(tt.frame))
			if env.Kind != tt.kind {
				t.Fatalf("kind = %v, want %v", env.Kind, tt.kind)
			}
			if tt.kind == Invalid || tt.kind == Batch || tt.kind == NotJSON {
				return
			}
			if string(env.Method) != tt.method || string(env.ID) != tt.id || env.Error != tt.isErr {
				t.Fatalf("got method %q id %q err %v, want %q %q %v", env.Method, env.ID, env.Error, tt.method, tt.id, tt.isErr)
			}
		})
	}
}

func TestPeekParams(t *testing.T) {
	tests := []struct{ name, frame, want string }{
		{"object", `{"jsonrpc":"2.0","method":"session/update","params":{"update":{"id":3}}}`, `{"update":{"id":3}}`},
		{"none", `{"id":1,"method":"m"}`, ""},
		{"array", `{"method":"m","params":[1, 2]}`, `[1, 2]`},
		{"last wins", `{"method":"m","params":{"a":1},"params":{"b":2}}`, `{"b":2}`},
		{"escaped key", `{"method":"m","params":{"a":1},"p\u0061rams":{"c":3}}`, `{"c":3}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := Peek([]byte(tt.frame))
			want, _ := rawjson.Lookup([]byte(tt.frame), "params")
			if string(env.Params) != tt.want || string(want) != tt.want || (env.Params == nil) != (tt.want == "") {
				t.Fatalf("Params = %q, want %q (rawjson.Lookup: %q)", env.Params, tt.want, want)
			}
		})
	}
}

func TestPeekDoesNotAllocate(t *testing.T) {
	frame := []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hello \"world\""}}}}`)
	if n := testing.AllocsPerRun(100, func() { Peek(frame) }); n != 0 {
		t.Fatalf("Peek allocates %v times", n)
	}
}

// FuzzPeek checks Peek against encoding/json on every input that is valid
// JSON: same kind, method and id.
func FuzzPeek(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize"}`,
		`{"id":"x","result":{}}`,
		`{"method":"n","params":[1,"]"]}`,
		`[1]`, `x`, `{"id":1,"error":{}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		env := Peek(b)
		if k := env.Kind; k == Request || k == Notification || k == Response {
			params, _ := rawjson.Lookup(b, "params")
			if string(env.Params) != string(params) || (env.Params == nil) != (params == nil) {
				t.Fatalf("Params = %q, rawjson.Lookup says %q for %q", env.Params, params, b)
			}
		}
		var m map[string]json.RawMessage
		if json.Unmarshal(b, &m) != nil {
			return
		}
		if env.Kind == NotJSON || env.Kind == Batch {
			t.Fatalf("valid object classified %v", env.Kind)
		}
		var method string
		hasMethod := false
		if raw, ok := m["method"]; ok && json.Unmarshal(raw, &method) == nil && len(raw) > 0 && raw[0] == '"' {
			hasMethod = true
		}
		_, hasID := m["id"]
		_, hasResult := m["result"]
		_, hasError := m["error"]
		want := Invalid
		switch {
		case hasMethod && hasID:
			want = Request
		case hasMethod:
			want = Notification
		case (hasResult || hasError) && hasID:
			want = Response
		}
		if env.Kind != want {
			// Duplicate keys or escaped keys can legitimately differ; only
			// flag plain inputs.
			if !plainKeys(b) {
				return
			}
			t.Fatalf("Peek kind %v, encoding/json says %v for %q", env.Kind, want, b)
		}
		if hasID && plainKeys(b) {
			var a, c any
			if json.Unmarshal(env.ID, &a) != nil || json.Unmarshal(m["id"], &c) != nil {
				t.Fatalf("id %q not valid JSON", env.ID)
			}
		}
	})
}

// plainKeys reports whether no key is repeated or escaped at the top level.
func plainKeys(b []byte) bool {
	seen := map[string]bool{}
	ok := true
	err := rawjson.Members(b, func(m rawjson.Member) bool {
		for _, c := range m.Key {
			if c == '\\' {
				ok = false
			}
		}
		if seen[string(m.Key)] {
			ok = false
		}
		seen[string(m.Key)] = true
		return ok
	})
	return ok && err == nil
}

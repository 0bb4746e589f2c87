package acpschema

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"strings"
	"testing"
)

// TestFilesUnmodified pins every embedded file to the sha256 that
// SOURCE.md gives for it: they are copies, never edited.
func TestFilesUnmodified(t *testing.T) {
	src, err := os.ReadFile("SOURCE.md")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(string(src)))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 2 && len(f[0]) == 64 {
			want[f[1]] = f[0]
		}
	}
	n := 0
	err = fs.WalkDir(Files(), ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		n++
		data, err := fs.ReadFile(Files(), path)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		if got := hex.EncodeToString(sum[:]); got != want[path] {
			t.Errorf("%s: sha256 %s, SOURCE.md says %q", path, got, want[path])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n != len(want) || n != 8 {
		t.Errorf("%d files embedded, SOURCE.md lists %d (want 8)", n, len(want))
	}
}

func TestValidate(t *testing.T) {
	s, err := Load(1)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		from     Sender
		method   string // for a response: the request's method
		frame    string
		wantPath string // "" = valid; "unknown" = ErrUnknownMethod
	}{
		{"tool call update", FromAgent, "",
			`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"t","status":"completed"}}}`, ""},
		{"out-of-enum status", FromAgent, "",
			`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"t","status":"launched"}}}`, "/params/update/status"},
		{"vendor method", FromAgent, "",
			`{"jsonrpc":"2.0","id":0,"method":"cursor/task","params":{}}`, "unknown"},
		{"extension method is unknown too", FromAgent, "",
			`{"jsonrpc":"2.0","id":0,"method":"_cursor/task","params":{}}`, "unknown"},
		{"client method sent by the client", FromClient, "",
			`{"jsonrpc":"2.0","id":1,"method":"session/request_permission","params":{}}`, "unknown"},
		{"request without id", FromClient, "",
			`{"jsonrpc":"2.0","method":"session/prompt","params":{"sessionId":"s","prompt":[]}}`, "/id"},
		{"float id", FromClient, "",
			`{"jsonrpc":"2.0","id":1.5,"method":"session/prompt","params":{"sessionId":"s","prompt":[]}}`, "/id"},
		{"no jsonrpc", FromClient, "",
			`{"id":1,"method":"session/prompt","params":{"sessionId":"s","prompt":[]}}`, "/jsonrpc"},
		{"unstable subagent_update", FromAgent, "",
			`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"subagent_update","sessionId":"c","state":{"state":"running"}}}}`, ""},
		{"bad subagent state", FromAgent, "",
			`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"subagent_update","sessionId":"c","state":"running"}}}`, "/params/update/state"},
		{"session link", FromAgent, "",
			`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"t","content":[{"type":"session","sessionId":"c"}]}}}`, ""},
		{"session link without id", FromAgent, "",
			`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"t","content":[{"type":"session"}]}}}`, "/params/update/content/0"},
		{"prompt response", FromAgent, "session/prompt",
			`{"jsonrpc":"2.0","id":1,"result":{"stopReason":"end_turn"}}`, ""},
		{"bad stop reason", FromAgent, "session/prompt",
			`{"jsonrpc":"2.0","id":1,"result":{"stopReason":"done"}}`, "/result/stopReason"},
		{"response of unknown method", FromClient, "",
			`{"jsonrpc":"2.0","id":"acp-normalize:1","result":{"outcome":{"outcome":"cancelled"}}}`, ""},
		{"error response", FromAgent, "session/prompt",
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"agent exited"}}`, ""},
		{"error without message", FromAgent, "session/prompt",
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32603}}`, "/error"},
		// P3: never a new root field; a frame is one JSON-RPC message.
		{"P3 root member", FromAgent, "",
			`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"t"}},"extra":1}`, "/extra"},
		{"request with a result", FromAgent, "",
			`{"jsonrpc":"2.0","id":1,"method":"session/request_permission","params":{"sessionId":"s","toolCall":{"toolCallId":"t"},"options":[]},"result":{}}`, "/result"},
		{"response with result and error", FromAgent, "session/new",
			`{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s"},"error":{"code":1,"message":"m"}}`, "/error"},
		// P3: a member twice is read differently by different clients
		// (the first or the last); the schema sees only the last.
		{"P3 duplicate member", FromAgent, "",
			`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"t","status":"launched","status":"completed"}}}`, "/params/update/status"},
		{"P3 duplicate root member", FromAgent, "",
			`{"jsonrpc":"1.0","jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"t"}}}`, "/jsonrpc"},
		// A session link is tool call content (S1), nowhere else.
		{"session link in a permission request's tool call", FromAgent, "",
			`{"jsonrpc":"2.0","id":1,"method":"session/request_permission","params":{"sessionId":"s","toolCall":{"toolCallId":"t","content":[{"type":"session","sessionId":"c"}]},"options":[]}}`, ""},
		{"session link in a plan", FromAgent, "",
			`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"plan","entries":[{"type":"session","sessionId":"c"}]}}}`, "/params/update/entries/0"},
		{"session link in a prompt", FromClient, "",
			`{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s","prompt":[{"type":"session","sessionId":"c"}]}}`, "/params/prompt/0/type"},
		{"session link as a permission option", FromAgent, "",
			`{"jsonrpc":"2.0","id":1,"method":"session/request_permission","params":{"sessionId":"s","toolCall":{"toolCallId":"t"},"options":[{"type":"session","sessionId":"c"}]}}`, "/params/options/0"},
		// Vendor data (rawInput, rawOutput, _meta) is free-form: an object
		// there that says "type":"session" is no session link.
		{"type session in rawInput", FromAgent, "",
			`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"t","rawInput":{"type":"session","name":"x"}}}}`, ""},
		{"type session in _meta", FromAgent, "",
			`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"t","_meta":{"v":[{"type":"session"}]}}}}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := s.Validate(tc.from, tc.method, []byte(tc.frame))
			switch {
			case tc.wantPath == "":
				if err != nil {
					t.Fatalf("want valid, got %v", err)
				}
			case tc.wantPath == "unknown":
				if !errors.Is(err, ErrUnknownMethod) {
					t.Fatalf("want ErrUnknownMethod, got %v", err)
				}
			default:
				var e *Error
				if !errors.As(err, &e) {
					t.Fatalf("want an *Error at %s, got %v", tc.wantPath, err)
				}
				for _, v := range e.Violations {
					if v.Path == tc.wantPath {
						return
					}
				}
				t.Fatalf("want a violation at %s, got %v", tc.wantPath, e.Violations)
			}
		})
	}
}

// TestViolationMessage: a violation says what the field must be, not
// that the value is no null (the other alternative of an optional field).
func TestViolationMessage(t *testing.T) {
	s, err := Load(1)
	if err != nil {
		t.Fatal(err)
	}
	err = s.Validate(FromAgent, "", []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"t","status":"done"}}}`))
	var e *Error
	if !errors.As(err, &e) || len(e.Violations) != 1 || e.Violations[0].Path != "/params/update/status" ||
		strings.Contains(e.Violations[0].Message, "null") || !strings.Contains(e.Violations[0].Message, "in_progress") {
		t.Errorf("violations %v (%v)", e, err)
	}
}

func TestUnstableShapes(t *testing.T) {
	s, err := Load(1)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"subagent_update", "session_message"} {
		if !s.unstableUpdates[u] {
			t.Errorf("%s is not an unstable sessionUpdate kind: %v", u, s.unstableUpdates)
		}
	}
	if s.unstableUpdates["tool_call"] || s.unstableMethods["session/prompt"] {
		t.Error("a stable shape is listed as unstable")
	}
	for _, m := range []string{"proxy/initialize", "proxy/successor"} {
		if !s.unstableMethods[m] {
			t.Errorf("%s is not an unstable method: %v", m, s.unstableMethods)
		}
	}
}

func TestLoadBothVersions(t *testing.T) {
	for _, v := range Versions() {
		s, err := Load(v)
		if err != nil {
			t.Fatal(err)
		}
		if !s.HasMethod("agent", "session/prompt") || !s.HasMethod("client", "session/update") {
			t.Errorf("v%d: core methods missing", v)
		}
	}
	if _, err := Load(3); err == nil {
		t.Error("Load(3) did not fail")
	}
}

// ValidateDef reaches the conductor protocol's shapes (x-side "proxy"),
// which Validate does not route by method.
func TestValidateDefProxyShapes(t *testing.T) {
	s, err := Load(1)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		def, value string
		ok         bool
	}{
		{"ProxySuccessorRequest", `{"method":"initialize","params":{"protocolVersion":1}}`, true},
		{"ProxySuccessorRequest", `{"params":{}}`, false},
		{"ProxySuccessorNotification", `{"method":"session/cancel","params":{"sessionId":"s"}}`, true},
		{"InitializeProxyRequest", `{"protocolVersion":1}`, true},
		{"InitializeProxyRequest", `{"protocolVersion":"one"}`, false},
		{"InitializeRequest", `{"protocolVersion":1}`, true},
	}
	for _, tt := range tests {
		err := s.ValidateDef(tt.def, []byte(tt.value))
		if (err == nil) != tt.ok {
			t.Errorf("ValidateDef(%s, %s) = %v, want ok=%v", tt.def, tt.value, err, tt.ok)
		}
	}
}

// TestViolationMessages: a violation names what the value may be, at
// the place that is wrong, so that a reader can fix the frame from the
// message alone: all the values of an enum (not the first alternative's,
// not "want null" from an optional field's null branch), and for an
// unknown sessionUpdate kind the kinds there are, not the first kind's
// missing fields.
func TestViolationMessages(t *testing.T) {
	s, err := Load(1)
	if err != nil {
		t.Fatal(err)
	}
	update := func(u string) string {
		return `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":` + u + `}}`
	}
	for _, tc := range []struct {
		name, frame string
		path        string
		want        []string // substrings of the violation's message
		only        bool     // the only violation
	}{
		{"status out of the enum", update(`{"sessionUpdate":"tool_call_update","toolCallId":"t","status":"done"}`),
			"/params/update/status", []string{`"pending"`, `"in_progress"`, `"completed"`, `"failed"`, `not "done"`}, true},
		{"kind out of the enum", update(`{"sessionUpdate":"tool_call","toolCallId":"t","title":"x","kind":"subagent"}`),
			"/params/update/kind", []string{`"read"`, `"execute"`, `"other"`, `not "subagent"`}, true},
		{"unknown sessionUpdate", update(`{"sessionUpdate":"bogus"}`),
			"/params/update/sessionUpdate", []string{`"agent_message_chunk"`, `"tool_call_update"`, `"plan"`, `not "bogus"`}, true},
		{"a field of the right update", update(`{"sessionUpdate":"tool_call_update","toolCallId":5}`),
			"/params/update/toolCallId", []string{"string"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var e *Error
			if err := s.Validate(FromAgent, "", []byte(tc.frame)); !errors.As(err, &e) {
				t.Fatalf("want an *Error, got %v", err)
			}
			if tc.only && len(e.Violations) != 1 {
				t.Errorf("want one violation, got %v", e.Violations)
			}
			for _, v := range e.Violations {
				if v.Path != tc.path {
					continue
				}
				for _, w := range tc.want {
					if !strings.Contains(v.Message, w) {
						t.Errorf("message %q at %s does not name %s", v.Message, v.Path, w)
					}
				}
				return
			}
			t.Fatalf("no violation at %s: %v", tc.path, e.Violations)
		})
	}
}

//go:build unix

// readCaptureFacts, which this test uses, is in interop_ts_test.go (unix).

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/proxy"
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/rewrite/rewritetest"
	"github.com/acp-normalize/acp-normalize/route"
	"github.com/acp-normalize/acp-normalize/route/routetest"
)

// TestGoSDKClientRecordings is the second client of docs/compatibility.md:
// every capture of every vendor is served by `mock-agent` behind the
// proxy with the full module list, and the Go SDK's client connection
// (github.com/coder/acp-go-sdk) sends the recorded requests, once as
// recorded and once opted in to Subagent Sessions. The SDK (v0.13.0) has
// no subagents capability field, so it opts in with the other spelling,
// clientCapabilities._meta.subagents (S0: the proxy adds the standard
// one for the agent). The turn ends with the recorded stop reason, the
// SDK decodes every frame without logging an error (P3), the subagent
// snapshots it receives are the recording's vendor's (M, V2), no method
// outside ACP reaches it (V7), and an opted-in run gets a child session
// per launch call (S4; the SDK hands a subagent_update to the client as
// a variant it knows, see goSDKSession).
func TestGoSDKClientRecordings(t *testing.T) {
	t.Setenv(envRunMain, "1") // the proxy passes its environment to the agent (F4)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, capture := range captureFiles(t, "*/*.jsonl") {
		vendor := filepath.Base(filepath.Dir(capture))
		n++
		abs, err := filepath.Abs(capture)
		if err != nil {
			t.Fatal(err)
		}
		for _, optIn := range []bool{false, true} {
			name := vendor + "/" + strings.TrimSuffix(filepath.Base(capture), ".jsonl")
			if optIn {
				name += "/opted-in"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				goSDKSession(t, self, abs, vendor, optIn)
			})
		}
	}
	if n == 0 {
		t.Fatal("no recordings")
	}
}

// recordedClientRequests returns the client requests of a capture, in
// order: method and raw params.
func recordedClientRequests(t *testing.T, path string) [][2]string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var reqs [][2]string
	for _, rec := range routetest.ReadRecords(t, data) {
		env := pipe.Peek(rec.Frame)
		if rec.From == pipe.Client && env.Kind == pipe.Request {
			params, _ := rawjson.Lookup(rec.Frame, "params")
			reqs = append(reqs, [2]string{string(env.Method), string(params)})
		}
	}
	return reqs
}

// goSDKSession drives one capture; optIn adds _meta.subagents to the
// client's initialize (as does a recording whose client declared
// subagents: the SDK cannot send the standard field).
func goSDKSession(t *testing.T, self, capture, vendor string, optIn bool) {
	toProxyR, toProxyW := io.Pipe()
	fromProxyR, fromProxyW := io.Pipe()
	var wire, stderr lockedBuffer
	exited := make(chan int, 1)
	go func() {
		code, err := proxy.Run(proxy.Config{
			Argv:        []string{self, "mock-agent", "--no-stderr", capture},
			Router:      route.RouterConfig{Modules: allModules(), Version: version},
			Stdin:       toProxyR,
			Stdout:      fromProxyW,
			AgentStderr: &stderr,
			KillGrace:   5 * time.Second,
		})
		if err != nil {
			t.Errorf("proxy.Run: %v", err)
		}
		_ = fromProxyW.Close()
		exited <- code
	}()
	client := newRecordingClient()
	conn := acp.NewClientSideConnection(client, toProxyW, io.TeeReader(fromProxyR, &wire))
	logs := rewritetest.NewLogRecorder()
	conn.SetLogger(logs.Logger())
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	var sessionID acp.SessionId
	var stops []string
	for _, r := range recordedClientRequests(t, capture) {
		method, params := r[0], []byte(r[1])
		var err error
		switch method {
		case "initialize":
			var p acp.InitializeRequest
			if err = json.Unmarshal(params, &p); err == nil {
				if v, ok := rawjson.Lookup(params, "clientCapabilities", "subagents"); ok && rawjson.FirstByte(v) == '{' {
					optIn = true
				}
				if optIn {
					if p.ClientCapabilities.Meta == nil {
						p.ClientCapabilities.Meta = map[string]any{}
					}
					p.ClientCapabilities.Meta["subagents"] = true
				}
				_, err = conn.Initialize(ctx, p)
			}
		case "session/new":
			var p acp.NewSessionRequest
			if err = json.Unmarshal(params, &p); err == nil {
				var res acp.NewSessionResponse
				res, err = conn.NewSession(ctx, p)
				sessionID = res.SessionId
			}
		case "session/set_mode":
			var p acp.SetSessionModeRequest
			if err = json.Unmarshal(params, &p); err == nil {
				p.SessionId = sessionID
				_, err = conn.SetSessionMode(ctx, p)
			}
		case "session/prompt":
			var p acp.PromptRequest
			if err = json.Unmarshal(params, &p); err == nil {
				p.SessionId = sessionID
				var res acp.PromptResponse
				res, err = conn.Prompt(ctx, p)
				stops = append(stops, string(res.StopReason))
			}
		default:
			t.Fatalf("recorded client request %s: not driven by this test", method)
		}
		if err != nil {
			t.Fatalf("%s: %v (stderr: %s)", method, err, stderr.String())
		}
	}
	_ = toProxyW.Close() // client EOF: the mock agent ends, then the proxy
	select {
	case code := <-exited:
		if code != 0 {
			t.Errorf("proxy exit %d (stderr: %s)", code, stderr.String())
		}
	case <-ctx.Done():
		t.Fatalf("proxy did not exit after client EOF (stderr: %s)", stderr.String())
	}
	want := readCaptureFacts(t, capture).stopReasons
	if strings.Join(stops, ",") != strings.Join(want, ",") {
		t.Errorf("stop reasons %v, want the recorded %v", stops, want)
	}
	filter := newMethodCheck()
	snapshots, native, children, messages := 0, 0, 0, 0
	launches := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(wire.String()))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		frame := bytes.Clone(sc.Bytes())
		if m := string(pipe.Peek(frame).Method); m != "" && filter(m) {
			t.Errorf("V7: %s reached the Go SDK client", m)
		}
		tag, _ := rawjson.LookupString(frame, "params", "update", "sessionUpdate")
		if tag == "session_message" {
			messages++
		}
		if tag == "subagent_update" {
			if !optIn {
				t.Errorf("P3: a client that did not opt in got %s", frame)
			}
			child, _ := rawjson.LookupString(frame, "params", "update", "sessionId")
			if strings.HasPrefix(child, "acp-normalize-subagent-") {
				children++
			} else {
				native++ // the agent's own standard subagent sessions (V8, S3)
			}
		}
		if v, ok := rawjson.LookupString(routetest.Described(frame), "_meta", "acp-normalize", "subagent", "vendor"); ok {
			snapshots++
			if v != vendor {
				t.Errorf("M: snapshot of vendor %q in a %s recording", v, vendor)
			}
			id, _ := rawjson.LookupString(routetest.Described(frame), "toolCallId")
			launches[id] = true
		}
	}
	// The Go SDK v0.13.0 predates Subagent Sessions: it rejects a
	// session_message ("invalid variant payload", logged at error, the
	// notification dropped) and reads a subagent_update as the variant
	// its members fit (session_info_update). Nothing else may fail.
	rejected := 0
	for _, rec := range logs.Records() {
		switch {
		case rec.Level >= slog.LevelError && rec.Message == "failed to handle notification":
			rejected++
		case rec.Level >= slog.LevelWarn:
			t.Errorf("the Go SDK logged: %s %v", rec.Message, rec)
		}
	}
	if rejected != messages {
		t.Errorf("the Go SDK rejected %d notifications; only the %d session_message frames (a variant it does not know) may be", rejected, messages)
	}
	if snapshots == 0 && native == 0 && vendor != "cursor" {
		t.Errorf("M/V2: the client got no %s subagent snapshot and no native subagent session", vendor)
	}
	if optIn && len(launches) > 0 && children+native == 0 {
		t.Errorf("S4: an opted-in client got no child session for %d launch calls", len(launches))
	}
	// What the SDK handed the client: every session/update, the child
	// sessions' ones included (S5: frames moved to the child).
	client.mu.Lock()
	defer client.mu.Unlock()
	got := 0
	for _, u := range client.updates {
		if u.Update.UserMessageChunk != nil || u.Update.AgentMessageChunk != nil || u.Update.ToolCall != nil ||
			u.Update.ToolCallUpdate != nil || u.Update.AgentThoughtChunk != nil || u.Update.Plan != nil ||
			u.Update.AvailableCommandsUpdate != nil || u.Update.CurrentModeUpdate != nil || u.Update.ConfigOptionUpdate != nil ||
			u.Update.SessionInfoUpdate != nil || u.Update.UsageUpdate != nil {
			got++
		}
	}
	if got != len(client.updates) {
		t.Errorf("the Go SDK delivered %d session updates it could not type", len(client.updates)-got)
	}
}

// newMethodCheck reports methods no client may receive (V7).
func newMethodCheck() func(string) bool {
	f := rewrite.NewMethodFilter()
	return f.Unknown
}

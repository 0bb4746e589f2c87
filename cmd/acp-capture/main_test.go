package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// envE2EAgent makes the test binary act as an agent that asks the fake
// model once per prompt, at the URL in the config file it is given.
const envE2EAgent = "ACP_CAPTURE_E2E_AGENT"

func TestMain(m *testing.M) {
	if cfg := os.Getenv(envE2EAgent); cfg != "" {
		os.Exit(modelAgent(cfg))
	}
	os.Exit(m.Run())
}

// modelAgent reads the model URL from its rendered config file, and on
// session/prompt sends the prompt to the fake model's Chat Completions
// endpoint and reports the tool the model called as a message chunk.
func modelAgent(configPath string) int {
	cfg, err := os.ReadFile(configPath)
	if err != nil {
		return 3
	}
	var conf struct {
		BaseURL string `json:"baseURL"`
	}
	if json.Unmarshal(cfg, &conf) != nil {
		return 4
	}
	if leak := os.Getenv("LEAK"); leak != "" {
		fmt.Fprintln(os.Stderr, "working in", leak)
	}
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Prompt []struct {
					Text string `json:"text"`
				} `json:"prompt"`
			} `json:"params"`
		}
		if json.Unmarshal(in.Bytes(), &req) != nil {
			return 5
		}
		id := string(req.ID)
		switch req.Method {
		case "initialize":
			fmt.Printf(`{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":1}}`+"\n", id)
		case "session/new":
			fmt.Printf(`{"jsonrpc":"2.0","id":%s,"result":{"sessionId":"S1"}}`+"\n", id)
		case "session/prompt":
			body := fmt.Sprintf(`{"model":"m","messages":[{"role":"user","content":%q}],"tools":[{"type":"function","function":{"name":"agent"}}]}`, req.Params.Prompt[0].Text)
			resp, err := http.Post(conf.BaseURL+"/chat/completions", "application/json", strings.NewReader(body))
			if err != nil {
				return 6
			}
			var out struct {
				Choices []struct {
					Message struct {
						ToolCalls []struct {
							Function struct {
								Name string `json:"name"`
							} `json:"function"`
						} `json:"tool_calls"`
					} `json:"message"`
				} `json:"choices"`
			}
			data, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if json.Unmarshal(data, &out) != nil || len(out.Choices) == 0 || len(out.Choices[0].Message.ToolCalls) == 0 {
				return 7
			}
			fmt.Printf(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"S1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"model called %s"}}}}`+"\n", out.Choices[0].Message.ToolCalls[0].Function.Name)
			fmt.Printf(`{"jsonrpc":"2.0","id":%s,"result":{"stopReason":"end_turn"}}`+"\n", id)
		}
	}
	return 0
}

// TestRecordEndToEnd runs acp-capture on the model-asking agent: the
// template is rendered with the fake model's URL, the agent gets only the
// environment given, the model's answer (the qwen/foreground script's
// launch call) shows in the capture, and the model log holds the request.
// An agent that prints a machine path makes the run fail.
func TestRecordEndToEnd(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the rig runs on Unix")
	}
	tests := []struct {
		name     string
		leak     string
		wantCode int
		wantErr  string
	}{
		{name: "clean", wantCode: 0},
		{name: "machine path on stderr", leak: "/var/folders/xy/secret-project", wantCode: 1, wantErr: "paths outside"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			ws := filepath.Join(root, "ws")
			if err := os.Mkdir(ws, 0o755); err != nil {
				t.Fatal(err)
			}
			tmpl := filepath.Join(root, "config.tmpl")
			if err := os.WriteFile(tmpl, []byte(`{"baseURL":"{{MODEL_URL}}/v1"}`), 0o644); err != nil {
				t.Fatal(err)
			}
			rendered := filepath.Join(root, "home", "config.json")
			out := filepath.Join(root, "capture.jsonl")
			modelLog := filepath.Join(root, "model.jsonl")
			args := []string{"acp-capture", "--script", "qwen/foreground", "--out", out, "--workspace", ws,
				"--model-log", modelLog, "--template", tmpl + "=" + rendered,
				"--env", envE2EAgent + "=" + rendered, "--env", "LEAK=" + tt.leak,
				"--linger", "1ms", "--scrub", os.Args[0] + "=agent", "--log-level", "error",
				"--", os.Args[0], "-test.run=^$"}
			var stderr bytes.Buffer
			code := run(args, &stderr)
			if code != tt.wantCode || !strings.Contains(stderr.String(), tt.wantErr) {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, tt.wantCode, stderr.String())
			}
			capture, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{
				`"event":"start","version":"acp-capture","agent":["agent","-test.run=^$"]`,
				`"text":"model called agent"`,
				`"result":{"stopReason":"end_turn"}`,
				`"event":"exit","code":0`,
			} {
				if !bytes.Contains(capture, []byte(want)) {
					t.Errorf("capture lacks %s:\n%s", want, capture)
				}
			}
			log, err := os.ReadFile(modelLog)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Contains(log, []byte(`"path":"/v1/chat/completions","rule":"main:launch"`)) {
				t.Errorf("model log:\n%s", log)
			}
		})
	}
}

func TestParseFlags(t *testing.T) {
	tests := []struct {
		name  string
		parse func() error
		ok    bool
	}{
		{"answer", func() error { _, err := parseAnswers([]string{`_x/y={"a":1}`}); return err }, true},
		{"answer without JSON", func() error { _, err := parseAnswers([]string{`_x/y={`}); return err }, false},
		{"answer without =", func() error { _, err := parseAnswers([]string{`_x/y`}); return err }, false},
		{"scrub", func() error { _, err := parseScrub([]string{"/a=/b"}); return err }, true},
		{"scrub of nothing", func() error { _, err := parseScrub([]string{"=/b"}); return err }, false},
		{"template without =", func() error { return renderTemplate("x", "http://m") }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.parse(); (err == nil) != tt.ok {
				t.Errorf("err = %v, want ok=%v", err, tt.ok)
			}
		})
	}
}

func TestAgentEnv(t *testing.T) {
	t.Setenv("PATH", "/bin")
	t.Setenv("ACP_CAPTURE_TEST_PASS", "p")
	t.Setenv("ACP_CAPTURE_TEST_SECRET", "s")
	got := agentEnv([]string{"ACP_CAPTURE_TEST_PASS"}, []string{"URL={{MODEL_URL}}/v1"}, "http://127.0.0.1:9")
	want := []string{"PATH=/bin", "ACP_CAPTURE_TEST_PASS=p", "URL=http://127.0.0.1:9/v1"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("env %q, want %q (nothing else of ours)", got, want)
	}
}

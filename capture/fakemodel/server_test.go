package fakemodel

import (
	"bytes"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// goldenScript answers by the last user text: "say hello" with text,
// "read notes" with a Read tool call, "both" with text and two calls.
func goldenScript() *Script {
	lastUser := func(want string) func(*Request) bool {
		return func(r *Request) bool { return r.LastUserText() == want }
	}
	return &Script{Rules: []Rule{
		{Name: "hello", When: lastUser("say hello"), Reply: func(*Request) Turn { return Turn{Text: "Hello."} }},
		{Name: "read", When: lastUser("read notes"), Reply: func(*Request) Turn {
			return Turn{ToolCalls: []ToolCall{{Name: "Read", Args: []byte(`{"file_path":"/ws/notes.txt"}`)}}}
		}},
		{Name: "both", When: lastUser("both"), Reply: func(*Request) Turn {
			return Turn{Text: "Two calls.", ToolCalls: []ToolCall{
				{Name: "agent", Args: []byte(`{"description":"d","prompt":"p"}`)},
				{ID: "given_id", Name: "ls"},
			}}
		}},
	}}
}

// TestGolden sends each testdata/*.txtar request to a fresh server and
// compares the response (status, content type, body) and the request log
// line byte for byte. Run with -update to rewrite the expected sections.
func TestGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no golden files")
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			sections := map[string][]byte{}
			for _, f := range ar.Files {
				sections[f.Name] = f.Data
			}
			method, path, _ := strings.Cut(strings.TrimSpace(string(ar.Comment)), " ")
			var log bytes.Buffer
			s, err := New(Options{Scenario: goldenScript(), RequestLog: &log})
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(s.Handler())
			defer srv.Close()
			req, err := http.NewRequest(method, srv.URL+path, bytes.NewReader(bytes.TrimSpace(sections["request"])))
			if err != nil {
				t.Fatal(err)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			got := map[string][]byte{
				"status": []byte(resp.Status + "\n" + "Content-Type: " + resp.Header.Get("Content-Type") + "\n"),
				"body":   body,
				"log":    log.Bytes(),
			}
			if *update {
				ar.Files = []txtar.File{{Name: "request", Data: sections["request"]}}
				for _, name := range []string{"status", "body", "log"} {
					ar.Files = append(ar.Files, txtar.File{Name: name, Data: got[name]})
				}
				if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			for _, name := range []string{"status", "body", "log"} {
				if !bytes.Equal(got[name], sections[name]) {
					t.Errorf("%s differs\n--- got\n%s\n--- want\n%s", name, got[name], sections[name])
				}
			}
		})
	}
}

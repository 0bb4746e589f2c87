//go:build unix

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acp-normalize/acp-normalize/internal/acpschema"
)

// v2Session is a hand-written protocol v2 session (testdata/v2/README.md).
var v2Session = filepath.Join("testdata", "v2", "hand-written-session.jsonl")

type v2Record struct {
	From  string          `json:"from"`
	Frame json.RawMessage `json:"frame"`
}

func v2Records(t *testing.T) []v2Record {
	t.Helper()
	data, err := os.ReadFile(v2Session)
	if err != nil {
		t.Fatal(err)
	}
	var recs []v2Record
	for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var r v2Record
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r)
	}
	return recs
}

// The hand-written session is v2 by the schema's shapes: every frame but
// the vendor's own request (craft/drainMidTurnQueue) validates.
func TestK4SessionIsV2(t *testing.T) {
	t.Parallel()
	s, err := acpschema.Load(2)
	if err != nil {
		t.Fatal(err)
	}
	methods := map[string]string{} // request id -> method
	for i, r := range v2Records(t) {
		var env struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		_ = json.Unmarshal(r.Frame, &env)
		if env.Method != "" && env.ID != nil {
			methods[string(env.ID)] = env.Method
		}
		method := ""
		if env.Method == "" {
			method = methods[string(env.ID)]
		}
		err := s.Validate(acpschema.Sender(r.From), method, r.Frame)
		if errors.Is(err, acpschema.ErrUnknownMethod) && env.Method == "craft/drainMidTurnQueue" {
			continue
		}
		if err != nil && !(env.Method == "" && method == "craft/drainMidTurnQueue") {
			t.Errorf("record %d is no v2 frame: %v\n%s", i+1, err, r.Frame)
		}
	}
}

// K4: replayed through every module, each frame of a v2 session reaches
// the other side as the exact bytes recorded, and nothing is added.
func TestK4ReplayV2Untouched(t *testing.T) {
	t.Parallel()
	// The real binary, not run(): this test is parallel (see
	// TestK2ComponentRecordingReplays).
	code, stdout, stderr := runBinary(t, "replay", "--log-level", "info", v2Session)
	if code != 0 {
		t.Fatalf("replay exit %d: %s", code, stderr)
	}
	recs := v2Records(t)
	sc := bufio.NewScanner(strings.NewReader(stdout))
	sc.Buffer(nil, 1<<20)
	i := 0
	for sc.Scan() {
		var out struct {
			To    string          `json:"to"`
			Frame json.RawMessage `json:"frame"`
		}
		if err := json.Unmarshal(sc.Bytes(), &out); err != nil {
			t.Fatalf("replay line %q: %v", sc.Text(), err)
		}
		if i >= len(recs) {
			t.Fatalf("replay wrote more than the session's %d frames: %s", len(recs), sc.Text())
		}
		want := recs[i]
		if out.To == want.From || !bytes.Equal(out.Frame, want.Frame) {
			t.Fatalf("output %d: to %s %s\nwant to the other side of %s: %s", i+1, out.To, out.Frame, want.From, want.Frame)
		}
		i++
	}
	if i != len(recs) {
		t.Fatalf("replay wrote %d frames, want %d", i, len(recs))
	}
	if n := strings.Count(stderr, "protocol v2"); n != 1 {
		t.Fatalf("stderr %q: want the K4 info line once", stderr)
	}
}

// K4 live: the real binary in front of the mock agent serving the v2
// session passes every frame byte-exact both ways, and says so once.
func TestK4LiveV2Untouched(t *testing.T) {
	t.Parallel()
	recs := v2Records(t)
	var in bytes.Buffer
	var toClient [][]byte
	for _, r := range recs {
		if r.From == "client" {
			in.Write(r.Frame)
			in.WriteByte('\n')
		} else {
			toClient = append(toClient, r.Frame)
		}
	}
	cmd := exec.Command(proxyBinary, "--log-level", "info", "--", proxyBinary, "mock-agent", "--no-stderr", v2Session)
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	cmd.Stdin = &in
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v; stderr: %s", err, stderr.String())
	}
	got := bytes.Split(bytes.TrimSuffix(stdout.Bytes(), []byte("\n")), []byte("\n"))
	if len(got) != len(toClient) {
		t.Fatalf("client got %d frames, want %d:\n%s", len(got), len(toClient), stdout.String())
	}
	for i := range got {
		if !bytes.Equal(got[i], toClient[i]) {
			t.Fatalf("frame %d:\n got  %s\n want %s", i+1, got[i], toClient[i])
		}
	}
	if n := strings.Count(stderr.String(), "protocol v2"); n != 1 {
		t.Fatalf("stderr %q: want the K4 info line once", stderr.String())
	}
}

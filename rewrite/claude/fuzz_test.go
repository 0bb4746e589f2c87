package claude_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/acp-normalize/acp-normalize/proxy/proxytest"

	"golang.org/x/tools/txtar"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite"
)

// FuzzClaude feeds sequences of frames (one per line; a line starting
// with "C" is from the client, the rest of it the frame) to one
// connection's Rewriter, called directly so that a panic is not hidden by
// the router's recovery. For every frame:
//
//   - it is never dropped, and what is sent because of it is only the
//     launch call's update of L6/L7 (see checkLaunchUpdate);
//   - a frame without "claudeCode" is never changed (P1);
//   - a changed frame is valid JSON when the input was, and removing the
//     "acp-normalize" member of the _meta it describes gives back the
//     input, up to whitespace next to the removed member (L5).
func FuzzClaude(f *testing.F) {
	for _, seed := range fuzzSeeds(f) {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		rw := claudeModule().New(rewrite.Env{})
		for i, line := range bytes.Split(data, []byte("\n")) {
			from := pipe.Agent
			if len(line) > 0 && line[0] == 'C' {
				from, line = pipe.Client, line[1:]
			}
			in := bytes.Clone(line)
			v, err := rw.Rewrite(rewrite.NewFrame(from, line, int64(i+1)))
			if !bytes.Equal(line, in) {
				t.Fatalf("the module wrote into the frame's bytes")
			}
			if err != nil && (v.Drop || len(v.Out) > 0 || v.Frame != nil) {
				t.Fatalf("verdict %+v with error %v", v, err)
			}
			if v.Drop {
				t.Fatalf("frame dropped: %+v", v)
			}
			for _, o := range v.Out {
				checkLaunchUpdate(t, o)
			}
			if v.Frame == nil {
				continue
			}
			if !bytes.Contains(in, []byte(`"claudeCode"`)) {
				t.Fatalf("a frame without claudeCode was changed:\n%s\n%s", in, v.Frame)
			}
			if !json.Valid(in) {
				continue
			}
			if !json.Valid(v.Frame) {
				t.Fatalf("valid input, invalid output:\n%s\n%s", in, v.Frame)
			}
			path := metaPath(in)
			if path == nil {
				t.Fatalf("changed a frame that is no session/update or permission request: %s", in)
			}
			if _, had := rawjson.Lookup(in, path...); had {
				continue // merged into the vendor's object: no simple inverse
			}
			back, err := rawjson.Delete(v.Frame, path...)
			if err != nil {
				t.Fatalf("deleting the added member: %v", err)
			}
			if !jsonEqualBytes(back, in) {
				t.Fatalf("the change is more than the acp-normalize member:\n%s\n%s", in, v.Frame)
			}
		}
	})
}

// jsonEqualBytes compares two JSON texts ignoring insignificant whitespace.
func jsonEqualBytes(a, b []byte) bool {
	var ca, cb bytes.Buffer
	if json.Compact(&ca, a) != nil || json.Compact(&cb, b) != nil {
		return false
	}
	return bytes.Equal(ca.Bytes(), cb.Bytes())
}

// fuzzSeeds are the golden inputs and captures, one connection each.
func fuzzSeeds(f *testing.F) [][]byte {
	var seeds [][]byte
	add := func(data []byte) {
		var conn [][]byte
		for _, rec := range proxytest.ReadRecords(f, data) {
			if rec.Frame == nil {
				continue
			}
			line := rec.Frame
			if rec.From == pipe.Client {
				line = append([]byte("C"), line...)
			}
			conn = append(conn, line)
		}
		seeds = append(seeds, bytes.Join(conn, []byte("\n")))
	}
	goldens, _ := filepath.Glob(filepath.Join("testdata", "golden", "*.txtar"))
	for _, g := range goldens {
		ar, err := txtar.ParseFile(g)
		if err != nil {
			f.Fatal(err)
		}
		for _, file := range ar.Files {
			if file.Name == "input.jsonl" {
				add(file.Data)
			}
		}
	}
	captures, _ := filepath.Glob(filepath.Join(capturesDir, "*.jsonl"))
	for _, c := range captures {
		data, err := os.ReadFile(c)
		if err != nil {
			f.Fatal(err)
		}
		add(data)
	}
	return seeds
}

// checkLaunchUpdate checks a frame the module sends after a frame (L6,
// L7): a session/update to the client whose update is a tool_call_update
// with only toolCallId, sessionUpdate and _meta["acp-normalize"].subagent
// (no ACP status, P4).
func checkLaunchUpdate(t *testing.T, o rewrite.Output) {
	t.Helper()
	var f struct {
		Method string `json:"method"`
		Params struct {
			SessionID string                     `json:"sessionId"`
			Update    map[string]json.RawMessage `json:"update"`
		} `json:"params"`
	}
	if o.To != pipe.Client || o.Request != nil || json.Unmarshal(o.Frame, &f) != nil || f.Method != "session/update" {
		t.Fatalf("sent something else than a session/update to the client: %+v %s", o, o.Frame)
	}
	u := f.Params.Update
	if len(u) != 3 || string(u["sessionUpdate"]) != `"tool_call_update"` || u["toolCallId"] == nil {
		t.Fatalf("sent update is not toolCallId, sessionUpdate and _meta only: %s", o.Frame)
	}
	if _, ok := rawjson.Lookup(u["_meta"], "acp-normalize", "subagent"); !ok {
		t.Fatalf("sent update has no snapshot: %s", o.Frame)
	}
}

// FuzzClaudeDifferential (issue 14): a session, the same session with every
// frame spelled otherwise (blanks, escaped key and value characters,
// reordered members) and the same session with decoy members before some
// members under the same key (a parser reads the last one) get the same
// verdicts and snapshots, frame for frame. Seeds: the golden cases and the
// small recordings.
func FuzzClaudeDifferential(f *testing.F) {
	proxytest.FuzzDifferential(f, capturesDir, claudeModule())
}

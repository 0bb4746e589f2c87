package claude_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/acp-normalize/acp-normalize/route/routetest"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite"
)

// FuzzClaude feeds sessions (routetest.Lines: one frame a line, after a
// byte that says the side) to one connection's Rewriter, called directly so that a panic is not hidden by
// the router's recovery. For every frame:
//
//   - it is never dropped, and what is sent because of it is only the
//     launch call's update of L6/L7 (see checkLaunchUpdate);
//   - a frame without "claudeCode" is never changed (P1);
//   - a changed frame is valid JSON when the input was, and removing the
//     "acp-normalize" member of the _meta it describes gives back the
//     input, up to whitespace next to the removed member (L5).
func FuzzClaude(f *testing.F) {
	for _, seed := range routetest.Sessions(f, capturesDir) {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		rw := claudeModule().New(rewrite.Env{})
		for i, rec := range routetest.ParseLines(data) {
			line := rec.Frame
			in := bytes.Clone(line)
			v, err := rw.Rewrite(rewrite.NewFrame(rec.From, line, int64(i+1)))
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

// FuzzClaudeDifferential: a session, the same session with every
// frame spelled otherwise (blanks, escaped key and value characters,
// reordered members) and the same session with decoy members before some
// members under the same key (a parser reads the last one) get the same
// verdicts and snapshots, frame for frame. Seeds: the golden cases and the
// small recordings.
func FuzzClaudeDifferential(f *testing.F) {
	routetest.FuzzDifferential(f, capturesDir, claudeModule())
}

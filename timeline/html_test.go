package timeline

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/rewrite/claude"
	"github.com/acp-normalize/acp-normalize/rewrite/cursor"
	"github.com/acp-normalize/acp-normalize/rewrite/rewritetest"
	"github.com/acp-normalize/acp-normalize/rewrite/sessions"
	"github.com/acp-normalize/acp-normalize/route"
)

// renderPage replays captures through mods into one HTML page.
func renderPage(t *testing.T, mods []rewrite.Module, captures ...string) string {
	t.Helper()
	var buf bytes.Buffer
	h := NewHTML(&buf, Options{Modules: mods})
	render(t, h, mods, captures...)
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

var dataScript = regexp.MustCompile(`(?s)<script type="application/json" id="acpn-(rows|meta)-(\d+)">(.*?)</script>`)

// pageData decodes the page's embedded rows and meta, per capture.
func pageData(t *testing.T, page string) ([][]viewRow, []viewMeta) {
	t.Helper()
	var rows [][]viewRow
	var metas []viewMeta
	for _, m := range dataScript.FindAllStringSubmatch(page, -1) {
		switch m[1] {
		case "rows":
			var r []viewRow
			if err := json.Unmarshal([]byte(m[3]), &r); err != nil {
				t.Fatalf("rows of capture %s: %v", m[2], err)
			}
			rows = append(rows, r)
		case "meta":
			var mt viewMeta
			if err := json.Unmarshal([]byte(m[3]), &mt); err != nil {
				t.Fatalf("meta of capture %s: %v", m[2], err)
			}
			metas = append(metas, mt)
		}
	}
	return rows, metas
}

// TestHTMLGolden pins the viewer's data model (rows, header, tree) of the
// timeline's test captures through the test module, which makes every
// kind of change. Run with -update to rewrite.
func TestHTMLGolden(t *testing.T) {
	for _, capture := range testCaptures(t) {
		base := strings.TrimSuffix(filepath.Base(capture), ".jsonl")
		t.Run(base, func(t *testing.T) {
			rows, metas := pageData(t, renderPage(t, []rewrite.Module{rewritetest.Module()}, capture))
			if len(rows) != 1 || len(metas) != 1 {
				t.Fatalf("%d row sets, %d metas", len(rows), len(metas))
			}
			got, err := json.MarshalIndent(map[string]any{"rows": rows[0], "meta": metas[0]}, "", " ")
			if err != nil {
				t.Fatal(err)
			}
			rewritetest.CheckFile(t, filepath.Join("testdata", "golden", base+".viewer.json"), append(got, '\n'))
		})
	}
}

// TestHTMLHostileFrames: frame, stderr and capture-name text that is
// markup (a closing script tag, an img with onerror, a comment opener, a
// CDATA end, U+2028) never reaches the page as markup: the only script
// and style elements are the page's own, whose hashes the Content
// Security Policy names, and the embedded data still holds every byte.
func TestHTMLHostileFrames(t *testing.T) {
	evil := `</script><img src=x onerror="alert(1)"><script>alert(2)</script><!-- ]]> ` + "\u2028\u2029" + `</style>`
	// As agents write them: no HTML escaping in the frames.
	title := string(rawjson.Text(evil))
	stderr := title
	frame := `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":` + title +
		`,"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":` + title + `}}}}`
	capture := `{"from":"agent","frame":` + string(frame) + "}\n" +
		`{"from":"agent","stderr":` + string(stderr) + "}\n" +
		`{"from":"agent","text":` + string(title) + "}\n" +
		`{"from":"agent","frame":{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"t","title":` + string(title) + `,"rawInput":{"_toolName":"task"}}}}}` + "\n"
	name := writeCapture(t, capture)
	var buf bytes.Buffer
	h := NewHTML(&buf, Options{Modules: []rewrite.Module{rewritetest.Module()}})
	if err := h.Begin(`</title><script>alert(3)</script>`); err != nil {
		t.Fatal(err)
	}
	if err := h.End(); err != nil {
		t.Fatal(err)
	}
	render(t, h, []rewrite.Module{rewritetest.Module()}, name)
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	page := buf.String()

	for _, bad := range []string{"<img", "alert(1)\"", "<!--", "]]>", "\u2028", "\u2029", "</style><", "<script>alert"} {
		if strings.Contains(page, bad) {
			t.Errorf("the page holds %q", bad)
		}
	}
	if n := strings.Count(page, "<script"); n != 5 { // 2 captures x (rows, meta) + the viewer
		t.Errorf("%d script elements, want 5", n)
	}
	if n := strings.Count(page, "</script>"); n != 5 {
		t.Errorf("%d </script>, want 5", n)
	}
	if n := strings.Count(page, "<style>"); n != 1 {
		t.Errorf("%d style elements, want 1", n)
	}
	csp := regexp.MustCompile(`<meta http-equiv="Content-Security-Policy" content="([^"]+)">`).FindStringSubmatch(page)
	if csp == nil {
		t.Fatal("no Content-Security-Policy")
	}
	js := page[strings.LastIndex(page, "<script>")+len("<script>") : strings.LastIndex(page, "</script>")]
	css := page[strings.Index(page, "<style>")+len("<style>") : strings.Index(page, "</style>")]
	for _, want := range []string{"default-src 'none'", "script-src '" + cspHash(js) + "'", "style-src '" + cspHash(css) + "'", "connect-src 'none'"} {
		if !strings.Contains(csp[1], want) {
			t.Errorf("CSP %q lacks %q", csp[1], want)
		}
	}
	if !strings.Contains(page, "<title>&lt;/title&gt;&lt;script&gt;alert(3)&lt;/script&gt; — acp-normalize</title>") {
		t.Errorf("title not escaped: %s", page[:strings.Index(page, "</title>")+8])
	}

	rows, _ := pageData(t, page)
	if len(rows) != 2 || len(rows[1]) < 4 {
		t.Fatalf("rows %v", rows)
	}
	r := rows[1]
	if !strings.Contains(r[0].In, title) || r[0].Session != evil || !strings.Contains(r[0].Detail, "</script>") {
		t.Errorf("the frame's text is not kept: %+v", r[0])
	}
	if r[1].Kind != "stderr" || !strings.Contains(r[1].Head, "</script><img") {
		t.Errorf("stderr row %+v", r[1])
	}
	if r[3].Outs == nil || !strings.Contains(r[3].Outs[0].Frame, "onerror") {
		t.Errorf("replaced frame %+v", r[3])
	}
}

// TestHTMLInvalidUTF8: bytes that are not UTF-8 are shown escaped, never
// replaced silently.
func TestHTMLInvalidUTF8(t *testing.T) {
	name := writeCapture(t, "{\"from\":\"agent\",\"text\":\"ok\"}\n{\"from\":\"client\",\"frame\":{\"jsonrpc\":\"2.0\",\"method\":\"x\",\"params\":{\"b\":\"\xff\xfe\"}}}\n")
	rows, _ := pageData(t, renderPage(t, nil, name))
	r := rows[0][1]
	if r.In != "" || r.InEscaped != `{"jsonrpc":"2.0","method":"x","params":{"b":"\xff\xfe"}}` {
		t.Errorf("in %q, escaped %q", r.In, r.InEscaped)
	}
}

// TestHTMLNoCapture: a page without a capture is still a whole page.
func TestHTMLNoCapture(t *testing.T) {
	var buf bytes.Buffer
	if err := NewHTML(&buf, Options{}).Close(); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	if !strings.HasPrefix(page, "<!DOCTYPE html>") || !strings.HasSuffix(page, "</html>\n") || strings.Contains(page, "acpn-rows-0") {
		t.Errorf("page:\n%.300s", page)
	}
}

// TestHTMLTree: the subagent tree of real sessions: Cursor's launch call
// (C3: the cursor/task that came after it completes its snapshot), Claude
// flat mode (L4: the subagent's frames belong to the launch call) and
// native subagent sessions (S3: a child session, its frames under it).
func TestHTMLTree(t *testing.T) {
	captures := filepath.Join("..", "testdata", "captures")
	tests := []struct {
		name    string
		capture string
		mods    []rewrite.Module
		want    []string // each node: kind<parent label|status|states|frames
	}{
		{"cursor_foreground_C3", "cursor/subagent-foreground.jsonl", []rewrite.Module{cursor.Module()}, []string{
			"session<-1 3f9a1c2e-7b4d-4e8a-9c61-5d2f0b8e4a17||[]|6",
			"launch<0 count files|completed|[pending running completed]|4 model=gpt-5.4-mini-medium dur=7627 measured",
		}},
		// L6 (running on the first child frame) is the sessions module's
		// (S8, every vendor), so it runs behind the claude module.
		{"claude_flat_L4", "claude/flat-foreground.jsonl", []rewrite.Module{claude.Module(), sessions.Module(nil)}, []string{
			"session<-1 e4e985fb-6247-4e2e-9356-70fcd4544120||[]|18",
			"launch<0 Read notes file|completed|[pending running completed]|12 model=claude-opus-5-5 dur=751 measured",
		}},
		{"claude_native_S3", "claude/rig-subagents.jsonl", []rewrite.Module{claude.Module()}, []string{
			"session<-1 fa102498-693d-41b1-ad2c-75eaec9137b6||[]|13",
			"child<0 Read notes file|idle (end_turn)|[running idle (end_turn)]|12",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rows, metas := pageData(t, renderPage(t, tt.mods, filepath.Join(captures, tt.capture)))
			var got []string
			for _, n := range metas[0].Tree {
				var states []string
				for _, s := range n.States {
					states = append(states, s.V)
				}
				label := n.Title
				switch n.Kind {
				case nodeSession:
					label = n.Session
				case nodeLaunch:
					label = n.Description
				}
				d := n.Kind + "<" + strconv.Itoa(n.Parent) + " " + label + "|" + n.Status + "|[" + strings.Join(states, " ") + "]|" + strconv.Itoa(n.Frames)
				if n.Kind == nodeLaunch {
					d += " model=" + n.Model
					if n.DurationMs != nil {
						d += " dur=" + strconv.Itoa(int(*n.DurationMs))
					}
					if n.Measured {
						d += " measured"
					}
				}
				got = append(got, d)
				// Rows name their node: as many as the node counts.
				count := 0
				for _, r := range rows[0] {
					if r.Node == n.ID+1 {
						count++
					}
				}
				if count != n.Frames {
					t.Errorf("node %d counts %d frames, %d rows name it", n.ID, n.Frames, count)
				}
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("tree:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// FuzzViewer replays arbitrary captures into the HTML viewer: it does not
// panic, the page's only script and style elements are its own (no frame
// ends an element or opens a tag) and its data parses back (package check
// fuzzes the check with the same seeds).
func FuzzViewer(f *testing.F) {
	f.Add([]byte(`{"from":"agent","frame":{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"</script><img src=x onerror=1>","update":{"sessionUpdate":"subagent_update","sessionId":"c","title":"<!--"}}}}` + "\n"))
	f.Add([]byte(`{"from":"client","frame":{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":2}}}` + "\n" + `{"from":"agent","frame":{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"x"}}}` + "\n"))
	f.Add([]byte(`{"from":"agent","text":"\u2028</style>"}` + "\n" + `{"from":"agent","stderr":"</script>"}` + "\n" + `{"event":"exit","code":1}` + "\n"))
	f.Add([]byte(`{"from":"agent","frame":{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"t","rawInput":{"_toolName":"task"},"_meta":{"acp-normalize":{"subagent":{"status":"running","durationMs":"x"}}}}}}}` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var page bytes.Buffer
		h := NewHTML(&page, Options{Modules: []rewrite.Module{rewritetest.Module()}})
		if err := h.Begin("fuzz</script>"); err != nil {
			t.Fatal(err)
		}
		err := route.Replay(bytes.NewReader(data), route.RouterConfig{Modules: []rewrite.Module{rewritetest.Module()}, NonJSON: route.ForwardNonJSON}, func(s *route.Step) error {
			if s.Kind == route.StepError {
				return nil
			}
			return h.Step(s)
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := h.End(); err != nil {
			t.Fatal(err)
		}
		if err := h.Close(); err != nil {
			t.Fatal(err)
		}
		out := page.String()
		if n := strings.Count(out, "</script"); n != 3 {
			t.Fatalf("%d </script in the page, want 3", n)
		}
		if n := strings.Count(out, "<script") + strings.Count(out, "<style"); n != 4 {
			t.Fatalf("%d script and style elements, want 4", n)
		}
		for _, bad := range []string{"<img", "<!--", "\u2028"} {
			if strings.Contains(out, bad) {
				t.Fatalf("the page holds %q", bad)
			}
		}
		rows, metas := pageData(t, out)
		if len(rows) != 1 || len(metas) != 1 {
			t.Fatalf("%d row sets, %d metas", len(rows), len(metas))
		}
	})
}

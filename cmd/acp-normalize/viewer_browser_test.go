package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/route"
)

// The viewer's browser tests drive a real headless Chromium over the
// DevTools protocol with chromedp (see the commit that added them for why
// that library). One browser serves the whole test, one tab per page.

var (
	viewerScreenshot = flag.String("viewer.screenshot", "", "write a PNG screenshot of the demo capture's viewer to this file (make viewer-screenshot)")
	viewerFrames     = flag.Int("viewer.frames", 20000, "frames of the synthetic capture TestViewerInBrowser/synthetic opens (the docs measure 100000)")
	viewerKeep       = flag.String("viewer.keep", "", "keep the synthetic capture and its HTML in this directory")
	viewerCapture    = flag.String("viewer.capture", "testdata/captures/cursor/subagent-foreground.jsonl", "the capture of the screenshot, relative to the repository (make viewer-screenshot passes DEMO_CAPTURE)")
)

// chromiumPath finds the browser: $ACP_NORMALIZE_CHROMIUM, else chromium
// (Debian), chromium-browser or google-chrome on the PATH.
func chromiumPath() string {
	if p := os.Getenv("ACP_NORMALIZE_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// browser is one headless Chromium for a test, with one tab that every
// page of the test is opened in, one after the other (a new tab costs
// more than a navigation).
type browser struct {
	tab context.Context
	mu  sync.Mutex
	cur *page // the page open in the tab, which gets the tab's events
}

// startBrowser starts Chromium, or skips the test (saying so) when there
// is none. The flags keep it off the network: without the background
// networking ones, its own connections are refused on a closed network.
func startBrowser(t *testing.T) *browser {
	t.Helper()
	path := chromiumPath()
	if path == "" {
		t.Skip("no Chromium found (apt-get install chromium, or set ACP_NORMALIZE_CHROMIUM): the viewer's browser tests are skipped")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-sync", true),
		chromedp.WindowSize(1400, 860),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	tab, cancelTab := chromedp.NewContext(actx)
	b := &browser{tab: tab}
	if err := chromedp.Do(tab); err != nil {
		cancelTab()
		cancelAlloc()
		t.Fatalf("starting %s: %v", path, err)
	}
	t.Cleanup(func() { cancelTab(); cancelAlloc() })
	if err := chromedp.Listen(tab, func(ev any) {
		b.mu.Lock()
		p := b.cur
		b.mu.Unlock()
		if p != nil {
			p.event(ev)
		}
	}); err != nil {
		t.Fatal(err)
	}
	return b
}

// page is the viewer open in the tab, and what the tab reported.
type page struct {
	t        *testing.T
	ctx      context.Context
	url      string
	mu       sync.Mutex
	problems []string // console errors and warnings, exceptions, log errors
	requests []string // network requests other than the page itself
}

// open opens the HTML file in the tab and waits for the viewer to be
// ready; the tab's events go to the page from then on.
func (b *browser) open(t *testing.T, file string) *page {
	t.Helper()
	abs, err := filepath.Abs(file)
	if err != nil {
		t.Fatal(err)
	}
	u := (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}).String()
	p := &page{t: t, ctx: b.tab, url: u}
	b.mu.Lock()
	b.cur = p
	b.mu.Unlock()
	t.Cleanup(func() {
		b.mu.Lock()
		if b.cur == p {
			b.cur = nil
		}
		b.mu.Unlock()
	})
	tctx, tcancel := context.WithTimeout(b.tab, 2*time.Minute)
	defer tcancel()
	if err := chromedp.Do(tctx, chromedp.Navigate(u), chromedp.WaitReady(chromedp.CSS(`body[data-ready="1"]`))); err != nil {
		t.Fatalf("opening %s: %v", u, err)
	}
	return p
}

func (p *page) event(ev any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch ev := ev.(type) {
	case *runtime.EventConsoleAPICalled:
		if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeWarning || ev.Type == runtime.ConsoleAPICalledTypeAssert {
			var args []string
			for _, a := range ev.Args {
				args = append(args, string(a.Value)+a.Description)
			}
			p.problems = append(p.problems, "console."+string(ev.Type)+": "+strings.Join(args, " "))
		}
	case *runtime.EventExceptionThrown:
		d := ev.ExceptionDetails
		text := d.Text
		if d.Exception != nil {
			text += " " + d.Exception.Description
		}
		p.problems = append(p.problems, fmt.Sprintf("exception at %d:%d: %s", d.LineNumber, d.ColumnNumber, text))
	case *log.EventEntryAdded:
		if ev.Entry.Level == log.EntryLevelError || ev.Entry.Level == log.EntryLevelWarning {
			p.problems = append(p.problems, "log "+string(ev.Entry.Level)+": "+ev.Entry.Text+" "+ev.Entry.URL)
		}
	case *network.EventRequestWillBeSent:
		if ev.Request.URL != p.url {
			p.requests = append(p.requests, ev.Request.URL)
		}
	}
}

// clean fails the test for any console error, exception or network
// request the page made.
func (p *page) clean() {
	p.t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, pr := range p.problems {
		p.t.Errorf("the page reported: %s", pr)
	}
	for _, r := range p.requests {
		p.t.Errorf("the page made a network request: %s", r)
	}
}

// actionTimeout bounds one action on the page: a page that hangs fails
// the test instead of stalling it.
const actionTimeout = time.Minute

// eval evaluates a JavaScript expression in the page into T.
func eval[T any](p *page, expr string) T {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, actionTimeout)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		p.t.Fatalf("evaluating %s: %v", expr, err)
	}
	return v
}

func (p *page) do(actions ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, actionTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		p.t.Fatal(err)
	}
}

// viewerStats is what acpnViewer.stats() reports.
type viewerStats struct {
	Captures, Rows, Frames, Shown, ShownFrames, Rendered int
	Count                                                string
	Nodes, Launches, Children, Sessions, TreeModel       int
	FirstShownLine                                       int
	Detail                                               bool
}

func (p *page) stats() viewerStats { return eval[viewerStats](p, `acpnViewer.stats()`) }

// choose sets a filter control as a user does and returns the stats.
func (p *page) choose(id, value string) viewerStats {
	p.t.Helper()
	js := fmt.Sprintf(`(function(){var s=document.getElementById(%q); s.value=%q; s.dispatchEvent(new Event('change', {bubbles:true})); return acpnViewer.stats();})()`, id, value)
	return eval[viewerStats](p, js)
}

// expected is what a capture holds, counted here independently of the
// viewer: from the replay's steps and each frame decoded on its own.
type expected struct {
	rows, frames, fromClient, fromAgent, stderr, events, changed int
	methods, kinds, sessions                                     map[string]int
	launches, children                                           map[string]bool
	// needle is a session id of the capture, found counts the rows whose
	// text holds it (case-insensitively) and firstLine the first of them.
	needle    string
	found     int
	firstLine int
}

// expect replays a capture as `replay` does and counts what the viewer
// must show.
func expect(t *testing.T, capture string) expected {
	t.Helper()
	f, err := os.Open(capture)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	e := expected{methods: map[string]int{}, kinds: map[string]int{}, sessions: map[string]int{}, launches: map[string]bool{}, children: map[string]bool{}}
	type reqID struct {
		to pipe.Side
		id string
	}
	requests := map[reqID]string{}
	var texts []struct {
		line int
		text string
	}
	err = route.ReplayWith(f, func(start *route.Step) (route.RouterConfig, error) {
		mods, options, nonJSON, _ := replaySettings{}.resolve(start)
		return route.RouterConfig{Modules: mods, Settings: options, Version: version, NonJSON: nonJSON}, nil
	}, func(s *route.Step) error {
		if s.Kind == route.StepError {
			return nil
		}
		e.rows++
		if s.Changed() {
			e.changed++
		}
		text := s.Text
		switch s.Kind {
		case route.StepStderr:
			e.stderr++
		case route.StepEvent, route.StepEnd:
			e.events++
		case route.StepFrame:
			e.frames++
			if s.From == pipe.Client {
				e.fromClient++
			} else {
				e.fromAgent++
			}
			text = string(s.In)
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
				Params struct {
					SessionID any `json:"sessionId"`
					Update    struct {
						SessionUpdate string `json:"sessionUpdate"`
					} `json:"update"`
				} `json:"params"`
				Result *struct {
					SessionID any `json:"sessionId"`
				} `json:"result"`
			}
			if !s.NonJSON && json.Unmarshal(s.In, &m) == nil {
				switch {
				case m.Method != "" && m.ID != nil:
					requests[reqID{s.From.Other(), string(m.ID)}] = m.Method
					e.methods[m.Method]++
				case m.Method != "":
					e.methods[m.Method]++
				case m.ID != nil:
					// The request travelled the other way: to this frame's sender.
					if method := requests[reqID{s.From, string(m.ID)}]; method != "" {
						e.methods[method]++
					}
				}
				if m.Method == "session/update" && m.Params.Update.SessionUpdate != "" {
					e.kinds[m.Params.Update.SessionUpdate]++
				}
				sid, _ := m.Params.SessionID.(string)
				if sid == "" && m.Result != nil {
					sid, _ = m.Result.SessionID.(string)
				}
				if sid != "" {
					e.sessions[sid]++
				}
			}
			analyzed := false
			for _, o := range s.Outs {
				if pipe.IsJSON(o.Frame) {
					analyzed = true
					treeFacts(o.Frame, e.launches, e.children)
				}
			}
			if !analyzed && !s.NonJSON {
				treeFacts(s.In, e.launches, e.children)
			}
		}
		for _, o := range s.Outs {
			text += "\n" + string(o.Frame)
		}
		texts = append(texts, struct {
			line int
			text string
		}{s.Line, strings.ToLower(text)})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for sid := range e.sessions {
		if e.needle == "" || sid < e.needle {
			e.needle = sid
		}
	}
	for _, tx := range texts {
		if e.needle != "" && strings.Contains(tx.text, strings.ToLower(e.needle)) {
			if e.found == 0 {
				e.firstLine = tx.line
			}
			e.found++
		}
	}
	return e
}

// treeFacts notes the launch calls (a tool call carrying the rule-M
// snapshot, by session and toolCallId) and the child sessions (standard
// subagent_update, draft subagent_spawned) a delivered frame shows.
func treeFacts(frame []byte, launches, children map[string]bool) {
	var m struct {
		Method string `json:"method"`
		Params struct {
			SessionID string `json:"sessionId"`
			Update    struct {
				SessionUpdate     string `json:"sessionUpdate"`
				ToolCallID        string `json:"toolCallId"`
				SessionID         string `json:"sessionId"`
				SubagentSessionID string `json:"subagentSessionId"`
				Meta              struct {
					AcpNormalize struct {
						Subagent json.RawMessage `json:"subagent"`
					} `json:"acp-normalize"`
				} `json:"_meta"`
			} `json:"update"`
		} `json:"params"`
	}
	if json.Unmarshal(frame, &m) != nil {
		return
	}
	if m.Method == "session/request_permission" {
		// S7: a hidden child's request, put on its parent, names the
		// child in its toolCall's _meta: the viewer shows the child.
		if c, ok := rawjson.LookupString(frame, "params", "toolCall", "_meta", "acp-normalize", "childSessionId"); ok && c != "" {
			children[c] = true
		}
		return
	}
	if m.Method != "session/update" {
		return
	}
	u := m.Params.Update
	switch u.SessionUpdate {
	case "tool_call", "tool_call_update":
		if len(u.Meta.AcpNormalize.Subagent) > 0 && u.Meta.AcpNormalize.Subagent[0] == '{' {
			launches[m.Params.SessionID+"\x00"+u.ToolCallID] = true
		}
	case "subagent_update":
		if u.SessionID != "" {
			children[u.SessionID] = true
		}
	case "subagent_spawned":
		if u.SubagentSessionID != "" {
			children[u.SubagentSessionID] = true
		}
	}
}

// writeViewer writes the viewer of captures with the real binary's
// `replay --format html`, as a user runs it, and returns the file.
func writeViewer(t *testing.T, dir string, captures ...string) string {
	t.Helper()
	return writeViewerIn(t, "", dir, captures...)
}

// writeViewerIn is writeViewer with the command run in directory wd (""
// for this one), the captures named relative to it.
func writeViewerIn(t *testing.T, wd, dir string, captures ...string) string {
	t.Helper()
	out := filepath.Join(dir, "session.html")
	f, err := os.OpenFile(out, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var stderr bytes.Buffer
	cmd := exec.Command(proxyBinary, append([]string{"replay", "--format", "html", "--log-level", "error"}, captures...)...)
	cmd.Stdout, cmd.Stderr, cmd.Dir = f, &stderr, wd
	if err := cmd.Run(); err != nil {
		t.Fatalf("replay --format html: %v: %s", err, stderr.String())
	}
	return out
}

// mostCommon returns the key with the highest count (ties: the smallest).
func mostCommon(m map[string]int) (string, int) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	best := ""
	for _, k := range keys {
		if best == "" || m[k] > m[best] {
			best = k
		}
	}
	return best, m[best]
}

// TestViewerInBrowser opens the viewer (`replay --format html`) of every
// bundled capture in headless Chromium and checks what the page shows
// against counts made here from the replay: every row rendered (through
// the virtual list), the tree's launch calls and child sessions, each
// filter's count, search, a click on a row and on a tree node, no console
// error and no network request. Then hostile frame content, several
// captures in one page, a large synthetic capture and, with
// -viewer.screenshot, the README's screenshot.
func TestViewerInBrowser(t *testing.T) {
	t.Parallel() // Chromium works while the end-to-end tests wait on their agents
	b := startBrowser(t)
	dir := t.TempDir()
	captures := captureFiles(t, "*/*.jsonl")
	captures = append(captures, "testdata/inspector-trace.jsonl", "testdata/plan-signal.jsonl", "testdata/v2/hand-written-session.jsonl")
	for _, capture := range captures {
		name := strings.TrimSuffix(filepath.ToSlash(capture), ".jsonl")
		name = name[strings.LastIndex(name[:strings.LastIndex(name, "/")], "/")+1:]
		t.Run(name, func(t *testing.T) {
			e := expect(t, capture)
			p := b.open(t, writeViewer(t, t.TempDir(), capture))
			checkCapturePage(t, p, e)
			checkRowsWhole(t, p)
			p.clean()
		})
	}
	t.Run("recorded_session", func(t *testing.T) { testViewerRecordedSession(t, b) })
	t.Run("hostile_frames", func(t *testing.T) { testViewerHostile(t, b) })
	t.Run("several_captures", func(t *testing.T) {
		a, c := "../../testdata/captures/cursor/subagent-foreground.jsonl", "../../testdata/captures/claude/rig-subagents.jsonl"
		p := b.open(t, writeViewer(t, t.TempDir(), a, c))
		if s := p.stats(); s.Captures != 2 || s.Frames != expect(t, a).frames || s.Launches != 1 {
			t.Errorf("first capture: %+v", s)
		}
		s := p.choose("capture", "1")
		if want := expect(t, c); s.Frames != want.frames || s.Children != len(want.children) || s.Launches != 0 {
			t.Errorf("second capture: %+v, want %d frames, %d children", s, want.frames, len(want.children))
		}
		p.clean()
	})
	t.Run("synthetic", func(t *testing.T) { testViewerSynthetic(t, b, dir) })
	if *viewerScreenshot != "" {
		t.Run("screenshot", func(t *testing.T) { viewerScreenshotTo(t, b, *viewerScreenshot) })
	}
}

// checkCapturePage checks one capture's page against e.
func checkCapturePage(t *testing.T, p *page, e expected) {
	t.Helper()
	s := p.stats()
	if s.Rows != e.rows || s.Frames != e.frames || s.Shown != e.rows {
		t.Errorf("rows %d (frames %d, shown %d), want %d rows, %d frames", s.Rows, s.Frames, s.Shown, e.rows, e.frames)
	}
	// The virtual list renders what is in view: every row of a short
	// capture; scrolled to the end, the rows through the last one.
	if s.Rendered == 0 || s.Rendered > s.Rows || s.Rows <= 20 && s.Rendered != s.Rows {
		t.Errorf("%d rows in the DOM for %d rows", s.Rendered, s.Rows)
	}
	if s.Count != fmt.Sprintf("%d of %d rows", e.rows, e.rows) {
		t.Errorf("count %q", s.Count)
	}
	if s.Launches != len(e.launches) || s.Children != len(e.children) || s.Sessions == 0 && e.sessions != nil && len(e.sessions) > 0 {
		t.Errorf("tree: %d launch calls, %d child sessions, %d sessions; the capture has %d launch calls %v, %d children %v",
			s.Launches, s.Children, s.Sessions, len(e.launches), e.launches, len(e.children), e.children)
	}
	if s.Nodes != s.TreeModel {
		t.Errorf("%d tree nodes drawn, %d in the data", s.Nodes, s.TreeModel)
	}

	// Each filter, alone, then back to all.
	for _, f := range []struct {
		id, value string
		want      int
	}{
		{"f-dir", "client", e.fromClient},
		{"f-dir", "agent", e.fromAgent},
		{"f-dir", "stderr", e.stderr},
		{"f-dir", "events", e.events},
	} {
		got := p.choose(f.id, f.value)
		if got.Shown != f.want {
			t.Errorf("%s=%s shows %d rows, want %d", f.id, f.value, got.Shown, f.want)
		}
		// The rows left from before the filter are gone from the page.
		if got.Rendered > got.Shown || got.Shown <= 20 && got.Rendered != got.Shown {
			t.Errorf("%s=%s: %d rows shown on the page for %d", f.id, f.value, got.Rendered, got.Shown)
		}
	}
	p.choose("f-dir", "")
	for _, f := range []struct {
		id     string
		counts map[string]int
	}{{"f-method", e.methods}, {"f-kind", e.kinds}, {"f-session", e.sessions}} {
		if len(f.counts) == 0 {
			continue
		}
		v, n := mostCommon(f.counts)
		if got := p.choose(f.id, v).Shown; got != n {
			t.Errorf("%s=%s shows %d rows, want %d", f.id, v, got, n)
		}
		p.choose(f.id, "")
	}
	p.do(chromedp.Click(chromedp.ID("f-changed")))
	if got := p.stats().Shown; got != e.changed {
		t.Errorf("only what the proxy changed: %d rows, want %d", got, e.changed)
	}
	p.do(chromedp.Click(chromedp.ID("f-changed")))
	if got := p.stats().Shown; got != e.rows {
		t.Errorf("filters off: %d rows shown, want %d", got, e.rows)
	}

	// Search finds the frames that hold a session id; Enter opens the first.
	if e.needle != "" {
		// The text is put in the field at once (typing it key by key costs
		// a round trip per key); Enter is a real key press.
		eval[chromedp.Void](p, fmt.Sprintf(`document.getElementById('f-q').value = %q`, e.needle))
		p.do(chromedp.SendKeys(chromedp.ID("f-q"), "\r"))
		s := p.stats()
		if s.Shown != e.found || s.FirstShownLine != e.firstLine || !s.Detail {
			t.Errorf("search %q: %d rows, first line %d, detail open %v; want %d rows from line %d", e.needle, s.Shown, s.FirstShownLine, s.Detail, e.found, e.firstLine)
		}
		eval[chromedp.Void](p, `document.getElementById('f-q').value = ''`)
		p.do(chromedp.SendKeys(chromedp.ID("f-q"), "\r"))
		if got := p.stats().Shown; got != e.rows {
			t.Errorf("search cleared: %d rows, want %d", got, e.rows)
		}
	}

	// A click on the first frame row opens it; its wire bytes are the
	// input's bytes.
	p.do(chromedp.Click(chromedp.CSS(`#spacer .row.k-frame`)))
	title := eval[string](p, `document.getElementById('detail-title').textContent`)
	if !regexp.MustCompile(`^line \d+ · (client → agent|agent → client)`).MatchString(title) {
		t.Errorf("detail title %q", title)
	}
	wire := eval[string](p, `(function(){var f=document.querySelectorAll('#detail .frame'); var last=f[f.length-1]; last.querySelectorAll('.tabs button')[1].click(); return last.querySelector('pre').textContent;})()`)
	if !strings.Contains(wire, `"jsonrpc"`) && !strings.Contains(title, "not JSON") {
		t.Errorf("wire bytes %q", wire)
	}

	// A click on a tree node shows that node's rows.
	if s.Launches+s.Children > 0 {
		p.do(chromedp.Click(chromedp.CSS(`.tnode[data-kind="launch"] > .tline, .tnode[data-kind="child"] > .tline`)))
		got := p.stats()
		want := eval[int](p, `(function(){var st=acpnViewer.stats(); var on=document.querySelector('.tnode.on'); var id=+on.dataset.id; var t=JSON.parse(document.getElementById('acpn-meta-0').textContent).tree; var n=0; function add(i){n+=t[i].nf; t.forEach(function(c){if(c.p===i) add(c.id);});} add(id); return n;})()`)
		if got.Shown != want || got.Shown == 0 || !got.Detail {
			t.Errorf("tree node: %d rows shown (detail %v), the node and its descendants have %d", got.Shown, got.Detail, want)
		}
		p.do(chromedp.Click(chromedp.ID("node-clear")))
	}
}

// testViewerHostile: frame content that is markup never runs: a page whose
// frames, stderr lines, ids and titles hold closing script tags, img
// onerror handlers and script elements loads, shows them as text (also in
// the detail and the tree), and nothing runs, logs a CSP violation or
// requests anything.
func testViewerHostile(t *testing.T, b *browser) {
	evil := `</script><script>window.pwned=1</script><img src=x onerror="window.pwned=2"><svg onload="window.pwned=3"><!--`
	q := func(s string) string { return strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), `"`, `\"`) }
	capture := strings.Join([]string{
		`{"from":"client","frame":{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientInfo":{"name":"` + q(evil) + `","version":"1"}}}}`,
		`{"from":"agent","frame":{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentInfo":{"name":"` + q(evil) + `","version":"1"}}}}`,
		`{"from":"agent","frame":{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"` + q(evil) + `","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"` + q(evil) + `"}}}}}`,
		`{"from":"agent","frame":{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"` + q(evil) + `","title":"Task","rawInput":{"_toolName":"task","description":"` + q(evil) + `"}}}}}`,
		`{"from":"agent","frame":{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"subagent_update","sessionId":"` + q(evil) + `","title":"` + q(evil) + `","state":{"state":"running"}}}}}`,
		`{"from":"agent","stderr":"` + q(evil) + `"}`,
		`{"from":"agent","text":"` + q(evil) + `"}`,
	}, "\n") + "\n"
	dir := t.TempDir()
	path := filepath.Join(dir, "evil<script>alert(1)<.jsonl")
	if err := os.WriteFile(path, []byte(capture), 0o600); err != nil {
		t.Fatal(err)
	}
	p := b.open(t, writeViewer(t, dir, path))
	check := func(when string) {
		t.Helper()
		if v := eval[string](p, `String(window.pwned)`); v != "undefined" {
			t.Errorf("%s: frame content ran (window.pwned = %s)", when, v)
		}
		if n := eval[int](p, `document.querySelectorAll('img, svg, iframe, object, embed').length + document.scripts.length`); n != 3 {
			t.Errorf("%s: %d script, img or svg elements, want the page's 3 scripts", when, n)
		}
	}
	check("loaded")
	if s := p.stats(); s.Frames != 6 || s.Children != 1 {
		t.Errorf("stats %+v", s)
	}
	for i := 0; i < 6; i++ {
		p.do(chromedp.Click(chromedp.CSS(fmt.Sprintf(`#spacer .row:nth-child(%d)`, i+1))))
		check(fmt.Sprintf("row %d opened", i+1))
	}
	p.do(chromedp.SendKeys(chromedp.ID("f-q"), "onerror\r"))
	check("searched")
	if !strings.Contains(eval[string](p, `document.getElementById('tree').textContent`), "</script>") {
		t.Error("the tree does not show the hostile title as text")
	}
	p.clean()
}

// synthetic says what writeSyntheticCapture wrote.
type synthetic struct {
	frames, stderr, launches, needleLine int
}

// writeSyntheticCapture writes a capture of about n frames: a Cursor
// session (cursor/task after each launch call, rule C3) with message
// chunk runs, tool calls, a subagent every 500 frames, a stderr line
// every 1000 and one needle frame near the end.
func writeSyntheticCapture(t *testing.T, path string, n int) synthetic {
	t.Helper()
	var buf bytes.Buffer
	var syn synthetic
	line := 0
	w := func(s string) { buf.WriteString(s + "\n"); line++ }
	ts := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	rec := func(from, frame string) {
		ts = ts.Add(3 * time.Millisecond)
		w(`{"ts":"` + ts.Format(time.RFC3339Nano) + `","from":"` + from + `","frame":` + frame + `}`)
		syn.frames++
	}
	rec("client", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{},"clientInfo":{"name":"synthetic","version":"1"}}}`)
	rec("agent", `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{}}}`)
	rec("client", `{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/w","mcpServers":[]}}`)
	rec("agent", `{"jsonrpc":"2.0","id":1,"result":{"sessionId":"syn-1"}}`)
	id := 2
	for frames := 4; frames < n; {
		rec("client", fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"session/prompt","params":{"sessionId":"syn-1","prompt":[{"type":"text","text":"turn %d"}]}}`, id, id))
		frames++
		for k := 0; k < 480 && frames < n-2; k++ {
			switch {
			case k%500 == 100:
				tc := fmt.Sprintf("task-%d", frames)
				rec("agent", `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"syn-1","update":{"sessionUpdate":"tool_call","toolCallId":"`+tc+`","title":"Task","kind":"other","status":"pending","rawInput":{"_toolName":"task"}}}}`)
				rec("agent", `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"syn-1","update":{"sessionUpdate":"tool_call_update","toolCallId":"`+tc+`","status":"completed","rawOutput":{"durationMs":1200,"isBackground":false}}}}`)
				rec("agent", fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"cursor/task","params":{"toolCallId":"%s","description":"subtask %d","prompt":"do part %d","model":"gpt-5.4-mini","agentId":"a-%d","durationMs":1200}}`, 100000+frames, tc, frames, frames, frames))
				frames += 3
				syn.launches++
			case k%10 == 5:
				rec("agent", fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"syn-1","update":{"sessionUpdate":"tool_call","toolCallId":"read-%d","title":"Read file.go","kind":"read","status":"completed"}}}`, frames))
				frames++
			default:
				rec("agent", fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"syn-1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"chunk %d of the answer "}}}}`, frames))
				frames++
			}
			if frames%1000 == 0 {
				ts = ts.Add(time.Millisecond)
				w(`{"ts":"` + ts.Format(time.RFC3339Nano) + `","from":"agent","stderr":"progress ` + fmt.Sprint(frames) + `"}`)
				syn.stderr++
			}
		}
		if frames >= n-2 {
			rec("agent", `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"syn-1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"the needle-of-the-synthetic-capture"}}}}`)
			syn.needleLine = line
			frames++
		}
		rec("agent", fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"stopReason":"end_turn"}}`, id))
		frames++
		id++
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return syn
}

// testViewerSynthetic opens a large capture (-viewer.frames, 20,000 by
// default): the list stays virtual (a few dozen rows in the DOM at any
// scroll position), the end is reachable, filters and search work on
// every row.
func testViewerSynthetic(t *testing.T, b *browser, dir string) {
	if *viewerKeep != "" {
		dir = *viewerKeep
	}
	capture := filepath.Join(dir, "synthetic.jsonl")
	syn := writeSyntheticCapture(t, capture, *viewerFrames)
	start := time.Now()
	html := writeViewer(t, dir, capture)
	rendered := time.Since(start)
	st, err := os.Stat(html)
	if err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	p := b.open(t, html)
	opened := time.Since(start)
	s := p.stats()
	t.Logf("%d frames: HTML %.1f MB written in %v, opened in %v (reported, not checked)", s.Frames, float64(st.Size())/1e6, rendered.Round(time.Millisecond), opened.Round(time.Millisecond))
	// Every step is a row: the frames, the stderr lines, the end.
	if s.Frames != syn.frames || s.Rows != syn.frames+syn.stderr+1 || s.Launches != syn.launches {
		t.Errorf("%d frames, %d rows, %d launch calls; want %d, %d, %d", s.Frames, s.Rows, s.Launches, syn.frames, syn.frames+syn.stderr+1, syn.launches)
	}
	if s.Rendered > 100 {
		t.Errorf("%d rows in the DOM: the list is not virtual", s.Rendered)
	}
	// How long the page takes to filter, search (the first search builds
	// the lower-cased text of every row) and scroll, measured in the page:
	// reported, not checked.
	ms := eval[[]float64](p, `(function(){
		function time(f){var t=performance.now(); f(); return Math.round((performance.now()-t)*10)/10;}
		var dir=document.getElementById('f-dir'), q=document.getElementById('f-q'), l=document.getElementById('list');
		return [
			time(function(){dir.value='agent'; dir.dispatchEvent(new Event('change'));}),
			time(function(){dir.value=''; dir.dispatchEvent(new Event('change'));}),
			time(function(){q.value='chunk 7'; q.dispatchEvent(new KeyboardEvent('keydown',{key:'Enter'}));}),
			time(function(){q.value='chunk 8'; q.dispatchEvent(new KeyboardEvent('keydown',{key:'Enter'}));}),
			time(function(){q.value=''; q.dispatchEvent(new KeyboardEvent('keydown',{key:'Enter'})); document.getElementById('detail').hidden=true;}),
			time(function(){l.scrollTop=l.scrollHeight/2; acpnViewer.stats();}),
		];})()`)
	t.Logf("in the page: filter %v ms, unfilter %v ms, first search %v ms, next search %v ms, clear %v ms, scroll and render %v ms", ms[0], ms[1], ms[2], ms[3], ms[4], ms[5])
	p.do(chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		_, err := chromedp.Run(ctx, chromedp.Evaluate[chromedp.Void](`acpnViewer.scrollToEnd()`))
		return err
	}))
	last := eval[int](p, `(function(){var m=0; document.querySelectorAll('#spacer .row').forEach(function(e){if(e.getClientRects().length) m=Math.max(m, +e.querySelector('.line').textContent||0)}); return m;})()`)
	if s2 := p.stats(); s2.Rendered > 100 || last < syn.needleLine {
		t.Errorf("scrolled to the end: %d rows in the DOM, last line shown %d (the needle is at %d)", s2.Rendered, last, syn.needleLine)
	}
	if got := p.choose("f-dir", "stderr").Shown; got != syn.stderr {
		t.Errorf("stderr rows %d, want %d", got, syn.stderr)
	}
	p.choose("f-dir", "")
	eval[chromedp.Void](p, `document.getElementById('f-q').value = 'needle-of-the-synthetic'`)
	p.do(chromedp.SendKeys(chromedp.ID("f-q"), "\r"))
	if s := p.stats(); s.Shown != 1 || s.FirstShownLine != syn.needleLine {
		t.Errorf("search: %d rows from line %d, want 1 at line %d", s.Shown, s.FirstShownLine, syn.needleLine)
	}
	p.clean()
}

// viewerScreenshotTo writes the README's screenshot: the demo capture's
// viewer showing the frames of its subagent, a frame the proxy changed
// open with the diff of what it added, at a fixed size. The header's
// facts as the page shows them go into the PNG as text
// (TestViewerScreenshotIsCurrent compares them with the build).
func viewerScreenshotTo(t *testing.T, b *browser, out string) {
	p := b.open(t, writeViewerIn(t, "../..", t.TempDir(), *viewerCapture))
	p.do(chromedp.EmulateViewport(1400, 780))
	defer p.do(chromedp.EmulateReset())
	p.do(chromedp.Click(chromedp.CSS(`.tnode[data-kind="launch"] > .tline`)))
	// The launch call's last frame the proxy replaced (the demo's completed
	// tool call), by line: the rows' order in the page is the pool's.
	eval[chromedp.Void](p, `(function(){
		var rows = Array.prototype.filter.call(document.querySelectorAll('#spacer .row.k-frame'), function (r) { return !r.hidden && r.querySelector('.badge.op-replace'); });
		rows.sort(function (a, b) { return +a.querySelector('.line').textContent - +b.querySelector('.line').textContent; });
		rows[rows.length - 1].click();
	})()`)
	facts := eval[map[string]string](p, `(function(){var o={}; document.querySelectorAll('#facts .fact').forEach(function(f){var k=f.querySelector('.k').textContent; o[k.trim()]=f.textContent.slice(k.length);}); return o;})()`)
	header, err := json.Marshal(facts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(p.ctx, actionTimeout)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	if png, err = withPNGText(png, screenshotKey, string(header)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s (%d bytes), header %s", out, len(png), header)
	p.clean()
}

// recordMockSession records a real session with --record: the binary in
// front of `acp-normalize mock-agent` serving the demo capture, a client
// that initializes, opens a session, prompts, reads up to the prompt's
// answer and then closes its stdin. The capture has what a recorded
// session always has and the bundled ones lack: the start event, the
// client-gone event and the agent's exit.
func recordMockSession(t *testing.T, dir string) string {
	t.Helper()
	capture, err := filepath.Abs(filepath.Join("..", "..", "testdata", "captures", "cursor", "subagent-foreground.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	rec := filepath.Join(dir, "recorded.jsonl")
	cmd := exec.Command(proxyBinary, "--record", rec, "--", proxyBinary, "mock-agent", "--no-stderr", capture)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdin, stdout := startPiped(t, cmd)
	for _, f := range []string{
		`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{},"clientInfo":{"name":"viewer-test","version":"1"}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}`,
		`{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"3f9a1c2e-7b4d-4e8a-9c61-5d2f0b8e4a17","prompt":[{"type":"text","text":"count the Go files"}]}}`,
	} {
		if _, err := io.WriteString(stdin, f+"\n"); err != nil {
			t.Fatalf("writing to the proxy: %v", err)
		}
	}
	sc := bufio.NewScanner(stdout)
	sc.Buffer(nil, 16<<20)
	answered := false
	for !answered && sc.Scan() {
		env := pipe.Peek(sc.Bytes())
		answered = env.Kind == pipe.Response && string(env.ID) == "2"
	}
	_ = stdin.Close()
	if err := cmd.Wait(); err != nil || !answered {
		t.Fatalf("recording through mock-agent: %v, prompt answered %v (stderr: %s)", err, answered, stderr.String())
	}
	return rec
}

// rowsNotWhole lists the rendered rows of the page whose cells are not
// laid out whole: a cell outside its row's box (pushed onto a second grid
// line), a cell whose text wraps (scroll height above its client height)
// and, for event and end rows, a cell too narrow for the event's name
// (what comes before the first comma: "event start", "event client-gone",
// "event exit code 0"). A long text may end in an ellipsis, its whole in
// the row's tooltip and the detail; the name may not be cut.
func rowsNotWhole(p *page) []string {
	return eval[[]string](p, `(function(){
		var out = [];
		document.querySelectorAll('#spacer .row').forEach(function (r) {
			if (r.hidden || !r.getClientRects().length) return;
			var rb = r.getBoundingClientRect(), line = r.querySelector('.line').textContent;
			var whole = /\bk-(event|end)\b/.test(r.className);
			Array.prototype.forEach.call(r.children, function (c) {
				if (!c.getClientRects().length) return;
				var cb = c.getBoundingClientRect(), what = r.className + ' line ' + line + ' cell ' + c.className + ' "' + c.textContent + '"';
				if (cb.top < rb.top - 0.5 || cb.bottom > rb.bottom + 0.5) out.push(what + ': box ' + cb.top + '-' + cb.bottom + ' outside the row ' + rb.top + '-' + rb.bottom);
				if (c.scrollHeight > c.clientHeight + 1) out.push(what + ': wraps (' + c.scrollHeight + ' > ' + c.clientHeight + ' px high)');
				if (whole && c.textContent) {
					var name = c.textContent.split(',')[0], range = document.createRange(), text = c.firstChild;
					while (text && text.nodeType !== 3) text = text.firstChild;
					if (text) {
						range.setStart(text, 0); range.setEnd(text, Math.min(name.length, text.length));
						var nb = range.getBoundingClientRect();
						if (nb.right > cb.right + 0.5) out.push(what + ': the name "' + name + '" is cut (' + nb.width + ' px in a cell of ' + cb.width + ')');
					}
				}
			});
		});
		return out;
	})()`)
}

// checkRowsWhole fails the test for each row rowsNotWhole finds, at the
// top of the list and scrolled to its end.
func checkRowsWhole(t *testing.T, p *page) {
	t.Helper()
	for _, where := range []string{"top", "end"} {
		if where == "end" {
			eval[chromedp.Void](p, `(function(){var l=document.getElementById('list'); l.scrollTop=l.scrollHeight; l.dispatchEvent(new Event('scroll'));})()`)
			p.do(chromedp.Sleep(0)) // let the scroll's render frame run
			eval[chromedp.Void](p, `new Promise(function(r){requestAnimationFrame(function(){requestAnimationFrame(r)})})`)
		}
		for _, bad := range rowsNotWhole(p) {
			t.Errorf("at the %s of the list: %s", where, bad)
		}
	}
	eval[chromedp.Void](p, `(function(){var l=document.getElementById('list'); l.scrollTop=0; l.dispatchEvent(new Event('scroll'));})()`)
}

// laneWidths are the widths of the viewer's columns and panes, in CSS
// pixels, and how many characters of a row's font a lane holds.
type laneWidths struct {
	Client, Proxy, Agent, Detail, Tree, Page, Viewport float64
	CharWidth                                          float64
}

func measureLanes(p *page) laneWidths {
	return eval[laneWidths](p, `(function(){
		function w(id){ var e=document.getElementById(id); return e && e.getClientRects().length ? e.getBoundingClientRect().width : 0; }
		var probe = document.createElement('span'), row = document.querySelector('#spacer .row');
		probe.style.font = getComputedStyle(row).font; probe.style.position = 'absolute'; probe.style.visibility = 'hidden'; probe.style.whiteSpace = 'pre';
		probe.textContent = '0000000000';
		document.body.appendChild(probe);
		var ch = probe.getBoundingClientRect().width / 10;
		probe.remove();
		return {Client: w('lane-client'), Proxy: w('lane-proxy'), Agent: w('lane-agent'), Detail: w('detail'), Tree: w('tree-pane'),
			Page: document.documentElement.scrollWidth, Viewport: window.innerWidth, CharWidth: ch};
	})()`)
}

// testViewerRecordedSession: a session recorded with --record through the
// mock agent shows every row whole, its event and end rows included; at
// 1280 px with a frame's detail open the lanes still hold a useful line
// and nothing scrolls sideways.
func testViewerRecordedSession(t *testing.T, b *browser) {
	rec := recordMockSession(t, t.TempDir())
	e := expect(t, rec)
	if e.events < 3 {
		t.Fatalf("the recorded session has %d event rows, want at least 3 (start, client-gone, exit)", e.events)
	}
	p := b.open(t, writeViewer(t, t.TempDir(), rec))
	checkCapturePage(t, p, e)
	if n := eval[int](p, `document.querySelectorAll('#spacer .row.k-event, #spacer .row.k-end').length`); n == 0 {
		t.Fatal("no event or end row rendered")
	}
	checkRowsWhole(t, p)

	for _, width := range []int64{1400, 1280} {
		p.do(chromedp.EmulateViewport(width, 800))
		p.do(chromedp.Click(chromedp.CSS(`#spacer .row.k-frame`)))
		if !p.stats().Detail {
			t.Fatalf("%d px: a click on a frame row opened no detail", width)
		}
		checkRowsWhole(t, p)
		w := measureLanes(p)
		// A lane that holds 24 characters shows a method and the start of
		// its summary; the detail needs room for its JSON.
		const minChars = 24
		for _, lane := range []struct {
			name  string
			width float64
		}{{"client", w.Client}, {"agent", w.Agent}} {
			if chars := lane.width / w.CharWidth; chars < minChars {
				t.Errorf("%d px with the detail open: the %s lane holds %.0f characters (%.0f px), want at least %d (%+v)", width, lane.name, chars, lane.width, minChars, w)
			}
		}
		if w.Detail < 320 || w.Tree == 0 {
			t.Errorf("%d px with the detail open: detail %.0f px, tree %.0f px; want a detail of 320 px or more beside the tree (%+v)", width, w.Detail, w.Tree, w)
		}
		if w.Page > w.Viewport+0.5 {
			t.Errorf("%d px with the detail open: the page is %.0f px wide, it scrolls sideways", width, w.Page)
		}
		t.Logf("%d px, detail open: lanes client %.0f, proxy %.0f, agent %.0f px (%.1f px a character); detail %.0f, tree %.0f px",
			width, w.Client, w.Proxy, w.Agent, w.CharWidth, w.Detail, w.Tree)
		p.do(chromedp.Click(chromedp.ID("detail-close")))
	}
	p.do(chromedp.EmulateReset())
	p.clean()
}

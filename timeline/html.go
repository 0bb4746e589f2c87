package timeline

import (
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"html"
	"io"
	"strconv"

	"github.com/acp-normalize/acp-normalize/internal/terminal"
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/route"
)

// The viewer's page: markup, style and script, embedded in the binary and
// written inline, so that the page is one file that needs no network.
var (
	//go:embed viewer/viewer.html
	viewerMarkup string
	//go:embed viewer/viewer.css
	viewerCSS string
	//go:embed viewer/viewer.js
	viewerJS string
)

// HTML writes one self-contained HTML page (inline style and script, no
// network access, works from file://) that shows the replayed captures: a
// header per capture, the timeline in lanes (client, proxy, agent) with
// each row's summary and what the proxy did (and the field changes of a
// replacement), the tree of sessions, subagent launch calls and child
// sessions, filters and search, and each frame's JSON and wire bytes.
//
// Rows are streamed as they come, as JSON in script elements that are
// data (type application/json), never markup: encoding/json escapes <, >
// and &, so no frame can close the element or open a tag, and the page's
// own script puts capture text on the page only as text. A Content
// Security Policy allows no network access at all, and only the page's own
// script and style (by hash): even markup that got in could not run.
// Close writes the end of the page; nothing is valid before it.
type HTML struct {
	w        io.Writer
	mods     []rewrite.Module
	b        *viewBuilder
	captures int
	rows     int
	started  bool
	buf      []byte
	err      error
}

// NewHTML returns an HTML renderer writing to w.
func NewHTML(w io.Writer, opts Options) *HTML {
	return &HTML{w: w, mods: opts.Modules}
}

// Begin implements Renderer.
func (h *HTML) Begin(name string) error {
	h.head(name)
	h.b, h.rows = newViewBuilder(name, h.mods), 0
	h.write(`<script type="application/json" id="acpn-rows-` + strconv.Itoa(h.captures) + `">[`)
	return h.err
}

// Step implements Renderer.
func (h *HTML) Step(s *route.Step) error {
	if h.b == nil || h.err != nil {
		return h.err
	}
	r := h.b.row(s)
	if h.rows > 0 {
		h.buf = append(h.buf, ',', '\n')
	}
	h.rows++
	h.buf = appendJSONValue(h.buf, r)
	if len(h.buf) >= 32<<10 {
		h.flush()
	}
	return h.err
}

// End implements Renderer.
func (h *HTML) End() error {
	if h.b == nil {
		return h.err
	}
	h.buf = append(h.buf, "]</script>\n"...)
	h.buf = append(h.buf, `<script type="application/json" id="acpn-meta-`+strconv.Itoa(h.captures)+`">`...)
	h.buf = appendJSONValue(h.buf, h.b.meta())
	h.buf = append(h.buf, "</script>\n"...)
	h.flush()
	h.b = nil
	h.captures++
	return h.err
}

// Close writes the end of the page: the script. A page without any
// capture says so when opened.
func (h *HTML) Close() error {
	h.head("")
	h.write("<script>" + viewerJS + "</script>\n</body>\n</html>\n")
	return h.err
}

// head writes the start of the page once.
func (h *HTML) head(name string) {
	if h.started {
		return
	}
	h.started = true
	title := "acp-normalize session viewer"
	if name != "" {
		title = name + " \u2014 acp-normalize"
	}
	h.write("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n" +
		`<meta name="viewport" content="width=device-width, initial-scale=1">` + "\n" +
		`<meta http-equiv="Content-Security-Policy" content="` + contentSecurityPolicy() + `">` + "\n" +
		`<meta name="referrer" content="no-referrer">` + "\n" +
		"<title>" + html.EscapeString(terminal.Text(title)) + "</title>\n" +
		"<style>" + viewerCSS + "</style>\n</head>\n<body>\n" + viewerMarkup +
		"<noscript>The viewer needs JavaScript; the frames are in this file's script elements as JSON.</noscript>\n")
}

// contentSecurityPolicy allows the page's own script and style, by hash,
// and nothing else: no network request of any kind, no other script
// (inline event handlers included), no plugin, no form, no base URL.
func contentSecurityPolicy() string {
	return "default-src 'none'; script-src '" + cspHash(viewerJS) + "'; style-src '" + cspHash(viewerCSS) +
		"'; img-src 'none'; connect-src 'none'; base-uri 'none'; form-action 'none'; object-src 'none'"
}

func cspHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "sha256-" + base64.StdEncoding.EncodeToString(sum[:])
}

// appendJSONValue appends v as JSON with encoding/json's HTML escaping
// (<, >, & and U+2028, U+2029 as \u escapes): safe inside a script
// element, whatever the strings hold.
func appendJSONValue(dst []byte, v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		return append(dst, "null"...)
	}
	return append(dst, b...)
}

func (h *HTML) write(s string) {
	h.buf = append(h.buf, s...)
	h.flush()
}

func (h *HTML) flush() {
	if h.err == nil && len(h.buf) > 0 {
		_, h.err = h.w.Write(h.buf)
	}
	h.buf = h.buf[:0]
}

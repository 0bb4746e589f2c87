package sessions

import (
	"bytes"
	"strings"
	"unicode/utf8"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
)

// Rule Z4: a subagent's progress on its launch call's content, built from
// the frames the vendor links to the call: the tool calls it runs (title
// and status) and the start of its latest message, newest last.
const (
	maxProgressLines = 5
	maxProgressText  = 80 // characters of a title or a message start
)

// progress is what a launch call's subagent was last seen doing.
type progress struct {
	lines []progressLine
	// inMessage: the newest line is a message still being streamed;
	// whole: its start is whole (a line break or maxProgressText came),
	// so its later chunks change nothing.
	inMessage, whole bool
}

type progressLine struct {
	toolCallID string // "" for a message
	text       string
	status     string
}

func (p *progress) bytes() int64 {
	n := int64(0)
	for _, l := range p.lines {
		n += int64(48 + len(l.toolCallID) + len(l.text) + len(l.status))
	}
	return n
}

// add folds a linked update into the progress; it reports whether the
// lines may have changed. Chunks of a message only change the line
// until its start is whole, so a long message costs one update, not
// one per chunk (the throttle: updates follow what the card shows).
func (p *progress) add(upd []byte) bool {
	var v [4][]byte
	if rawjson.Pick(upd, []string{"sessionUpdate", "toolCallId", "title", "status"}, v[:]) != nil {
		return false
	}
	tag, _ := rawjson.DecodeString(v[0])
	switch tag {
	case "agent_message_chunk":
		text, _ := rawjson.LookupString(upd, "content", "text")
		if !p.inMessage {
			if strings.TrimSpace(text) == "" {
				return false
			}
			p.push(progressLine{})
			p.inMessage, p.whole = true, false
		}
		if p.whole {
			return false
		}
		// The line keeps no line break, so the text after one must not
		// be appended to it: clip cutting anything ends the start.
		l := &p.lines[len(p.lines)-1]
		joined := strings.TrimLeft(l.text+text, " \r\n\t")
		l.text = clip(joined)
		p.whole = l.text != joined
		return true
	case "tool_call", "tool_call_update":
		id, _ := rawjson.DecodeString(v[1])
		if id == "" {
			return false
		}
		title, _ := rawjson.DecodeString(v[2])
		status, _ := rawjson.DecodeString(v[3])
		status = clip(status) // the vendor's: one short line, like a title
		p.inMessage = false
		for i := range p.lines {
			if l := &p.lines[i]; l.toolCallID == id {
				changed := false
				if title != "" && clip(title) != l.text {
					l.text, changed = clip(title), true
				}
				if status != "" && status != l.status {
					l.status, changed = status, true
				}
				return changed
			}
		}
		if title == "" {
			title = "tool call"
		}
		p.push(progressLine{toolCallID: id, text: clip(title), status: status})
		return true
	}
	return false
}

func (p *progress) push(l progressLine) {
	p.lines = append(p.lines, l)
	if len(p.lines) > maxProgressLines {
		p.lines = append(p.lines[:0], p.lines[len(p.lines)-maxProgressLines:]...)
	}
}

// render returns the progress text: one line per entry, newest last.
func (p *progress) render() string {
	var b strings.Builder
	for i, l := range p.lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		if l.toolCallID == "" {
			b.WriteString("> " + l.text)
			continue
		}
		b.WriteString("- " + l.text)
		if l.status != "" {
			b.WriteString(" (" + l.status + ")")
		}
	}
	return b.String()
}

// clip returns the first line of s, at most maxProgressText characters
// ("…" marks a cut). It walks only what it keeps: a hostile megabyte
// title costs no copy of itself (P6).
func clip(s string) string {
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = s[:i]
	}
	n := 0
	for i := range s {
		if n == maxProgressText-1 {
			if _, size := utf8.DecodeRuneInString(s[i:]); i+size < len(s) {
				return s[:i] + "…"
			}
			return s
		}
		n++
	}
	return s
}

// withProgress returns the content list the vendor gave the call with
// the progress text block after it (Z4: the agent's own content first),
// marked as the proxy's under _meta["acp-normalize"].progress.
func withProgress(vendor []byte, text string) []byte {
	block := append(append([]byte(`{"type":"content","content":{"type":"text","text":`), rawjson.Text(text)...),
		`,"_meta":{"`+metaKey+`":{"progress":true}}}}`...)
	if rawjson.FirstByte(vendor) != '[' {
		return append(append([]byte{'['}, block...), ']')
	}
	end := bytes.LastIndexByte(vendor, ']')
	out := make([]byte, 0, len(vendor)+len(block)+1)
	out = append(out, vendor[:end]...)
	if len(bytes.TrimSpace(vendor[1:end])) > 0 {
		out = append(out, ',')
	}
	out = append(out, block...)
	return append(out, vendor[end:]...)
}

package claude

import (
	"testing"
)

// TestCallKeepsOneReport pins P6 for the texts a call stores: once a
// result text of higher rank for resultText (handbackReport.text, then
// toolResponse.content[].text, then the completed frame's text) is known,
// the lower ones are not kept, whatever the frame order, and resultText
// is unchanged by it.
func TestCallKeepsOneReport(t *testing.T) {
	const (
		completed = `{"status":"completed","content":[{"type":"content","content":{"type":"text","text":"ack"}}]}`
		noStatus  = `{}`
		ccPlain   = `{"toolName":"Agent"}`
		ccContent = `{"toolName":"Agent","toolResponse":{"status":"completed","content":[{"type":"text","text":"content"}]}}`
		ccReport  = `{"toolName":"Agent","toolResponse":{"status":"completed","handbackReport":{"text":"report"},"content":[{"type":"text","text":"pointer"}]}}`
	)
	type frame struct{ obj, cc string }
	cases := []struct {
		name                                   string
		frames                                 []frame
		completedKept, contentKept, reportKept bool
		result                                 string
	}{
		{"P6_completed_only", []frame{{completed, ccPlain}}, true, false, false, ""},
		{"P6_content_after_completed", []frame{{completed, ccPlain}, {noStatus, ccContent}}, false, true, false, "content"},
		{"P6_completed_after_content", []frame{{noStatus, ccContent}, {completed, ccPlain}}, false, true, false, "content"},
		{"P6_report_after_completed", []frame{{completed, ccPlain}, {noStatus, ccReport}}, false, false, true, "report"},
		{"P6_completed_after_report", []frame{{noStatus, ccReport}, {completed, ccPlain}}, false, false, true, "report"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := &call{}
			for _, f := range tc.frames {
				if err := c.absorb([]byte(f.obj), []byte(f.cc), false); err != nil {
					t.Fatal(err)
				}
			}
			if got := c.completedText != nil; got != tc.completedKept {
				t.Errorf("completed frame's text kept: %v, want %v", got, tc.completedKept)
			}
			if got := c.trContentText != nil; got != tc.contentKept {
				t.Errorf("toolResponse content text kept: %v, want %v", got, tc.contentKept)
			}
			if got := c.handbackText != nil; got != tc.reportKept {
				t.Errorf("handback report kept: %v, want %v", got, tc.reportKept)
			}
			if tc.result == "" {
				return
			}
			if r := c.resultText(); r == nil || *r != tc.result {
				t.Errorf("resultText %v, want %q", r, tc.result)
			}
		})
	}
}

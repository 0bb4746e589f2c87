package pipe

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestCaptureWriterTextInPieces: a frame recorded in pieces (a frame that
// streams, F3) is one text record whose text is the frame, redacted (a
// secret split across two pieces included, R2); a record written while it
// is open comes after it, whole, and the numbering is the order of the
// calls (R1).
func TestCaptureWriterTextInPieces(t *testing.T) {
	secret := `sk-proj-` + strings.Repeat("Zq7", 20)
	frame := longText(600<<10, 300<<10, `\"token\":\"hunter2-x\" `+secret)
	at := bytes.Index(frame, []byte(secret))
	for _, tt := range []struct {
		name string
		raw  bool
		cut  bool
	}{{"redacted", false, false}, {"raw", true, false}, {"cut off", false, true}} {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			cw := NewCaptureWriter(&out, tt.raw)
			cw.SetClock(func() time.Time { return time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC) })
			seq, ok := cw.BeginText(Agent)
			if !ok || seq != 1 {
				t.Fatalf("BeginText = %d, %v", seq, ok)
			}
			if _, ok := cw.BeginText(Client); ok {
				t.Fatal("a second record in pieces began while one is open")
			}
			cw.TextPiece(frame[:at+10]) // the secret split across two pieces
			stderr := "a stderr line"
			if got := cw.Write(Record{From: Agent, Stderr: &stderr}); got != 2 {
				t.Fatalf("stderr record numbered %d", got)
			}
			cw.TextPiece(frame[at+10 : at+11])
			cw.TextPiece(frame[at+11:])
			cw.EndText(tt.cut)
			if err := cw.Close(); err != nil {
				t.Fatal(err)
			}
			written := out.String()
			var recs []Record
			for rec, err := range NewCaptureReader(&out).Records() {
				if err != nil {
					t.Fatalf("%v in %q", err, out.String()[:200])
				}
				recs = append(recs, rec)
			}
			if len(recs) != 2 || recs[0].Seq != 1 || recs[0].Text == nil || recs[1].Seq != 2 || recs[1].Stderr == nil {
				t.Fatalf("records %+v", recs)
			}
			text := *recs[0].Text
			if tt.raw {
				if text != string(frame) {
					t.Fatal("the raw text is not the frame")
				}
				return
			}
			if strings.Contains(text, secret[8:]) || strings.Contains(text, "hunter2") {
				t.Fatal("a secret is in the capture")
			}
			if want := string(frame[:100]); !strings.HasPrefix(text, want) {
				t.Fatalf("text starts %q, want %q", text[:100], want)
			}
			if cut := strings.Contains(written, `"cut":true`); cut != tt.cut {
				t.Fatalf("cut %v, want %v", cut, tt.cut)
			}
		})
	}
}

// A capture sink takes whole records only: BeginText refuses, so the
// caller records the frame whole; LeaveOut counts a frame recorded
// neither way as a dropped record (R1).
func TestCaptureSinkRefusesPieces(t *testing.T) {
	var got []Record
	cw := NewCaptureSink(func(r Record) { got = append(got, r) }, false)
	if _, ok := cw.BeginText(Agent); ok {
		t.Fatal("a sink began a record in pieces")
	}
	if seq := cw.LeaveOut(); seq != 1 {
		t.Fatalf("LeaveOut numbered %d", seq)
	}
	cw.Write(Record{From: Agent, Frame: []byte(`{}`)})
	if err := cw.Close(); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Event != "dropped" || got[0].Dropped != 1 || got[1].Seq != 3 {
		t.Fatalf("records %+v", got)
	}
}

// A capture closed in the middle of a record in pieces (the session ended
// during a long frame) ends that record, cut, so every line of the
// capture is a record (R1).
func TestCaptureWriterClosedInTheMiddleOfText(t *testing.T) {
	var out bytes.Buffer
	cw := NewCaptureWriter(&out, false)
	if _, ok := cw.BeginText(Agent); !ok {
		t.Fatal("BeginText refused")
	}
	cw.TextPiece([]byte(`{"jsonrpc":"2.0","method":"x","params":{"t":"abc`))
	stderr := "a stderr line"
	cw.Write(Record{From: Agent, Stderr: &stderr})
	if err := cw.Close(); err != nil {
		t.Fatal(err)
	}
	written := out.String()
	var n int
	for _, err := range NewCaptureReader(&out).Records() {
		if err != nil {
			t.Fatalf("%v in %q", err, written)
		}
		n++
	}
	if n != 2 || !strings.Contains(written, `"cut":true`) {
		t.Fatalf("%d records: %q", n, written)
	}
}

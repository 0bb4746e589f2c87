package pipe

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestCaptureWriterRecords(t *testing.T) {
	var buf bytes.Buffer
	cw := NewCaptureWriter(&buf, false)
	ts := time.Date(2026, 11, 29, 12, 0, 0, 5, time.UTC)
	cw.SetClock(func() time.Time { return ts })
	text := "Using worktree: /x"
	stderr := "warn <x>"
	code := 3
	cw.Write(Record{Event: "start", Version: "0.1.0", Argv: []string{"a", "--api-key", "<redacted>"}, Modules: []string{"cursor"}})
	cw.Write(Record{From: Client, Frame: []byte(`{"id":1,"method":"initialize","params":{"apiKey":"sk"}}`)})
	cw.Write(Record{From: Agent, Text: &text})
	cw.Write(Record{From: Agent, Stderr: &stderr})
	cw.Write(Record{From: Agent, Frame: []byte(`{"broken"`)})
	cw.Write(Record{Re: 2, Op: OpReply, To: Agent, Frame: []byte(`{"id":0,"result":{}}`)})
	cw.Write(Record{Re: 3, Op: OpDrop, To: Client})
	cw.Write(Record{Event: "exit", Code: &code})
	if err := cw.Flush(); err != nil {
		t.Fatal(err)
	}
	want := `{"seq":1,"ts":"2026-11-29T12:00:00.000000005Z","event":"start","version":"0.1.0","agent":["a","--api-key","<redacted>"],"modules":["cursor"]}
{"seq":2,"ts":"2026-11-29T12:00:00.000000005Z","from":"client","frame":{"id":1,"method":"initialize","params":{"apiKey":"<redacted>"}}}
{"seq":3,"ts":"2026-11-29T12:00:00.000000005Z","from":"agent","text":"Using worktree: /x"}
{"seq":4,"ts":"2026-11-29T12:00:00.000000005Z","from":"agent","stderr":"warn <x>"}
{"seq":5,"ts":"2026-11-29T12:00:00.000000005Z","from":"agent","text":"{\"broken\""}
{"seq":6,"ts":"2026-11-29T12:00:00.000000005Z","re":2,"op":"reply","to":"agent","frame":{"id":0,"result":{}}}
{"seq":7,"ts":"2026-11-29T12:00:00.000000005Z","re":3,"op":"drop","to":"client"}
{"seq":8,"ts":"2026-11-29T12:00:00.000000005Z","event":"exit","code":3}
`
	if buf.String() != want {
		t.Fatalf("capture:\n%s\nwant:\n%s", buf.String(), want)
	}

	// Reading it back gives the same records.
	var recs []Record
	for r, err := range NewCaptureReader(&buf).Records() {
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r)
	}
	if len(recs) != 8 {
		t.Fatalf("read %d records", len(recs))
	}
	if string(recs[1].Frame) != `{"id":1,"method":"initialize","params":{"apiKey":"<redacted>"}}` || recs[1].From != Client || !recs[1].IsInput() {
		t.Fatalf("record 2 = %+v", recs[1])
	}
	if *recs[2].Text != text || *recs[3].Stderr != stderr || recs[5].Op != OpReply || recs[5].Re != 2 || *recs[7].Code != 3 {
		t.Fatalf("records = %+v", recs)
	}
	if recs[5].IsInput() || recs[0].IsInput() {
		t.Fatal("output and event records are not inputs")
	}
}

func TestCaptureWriterRaw(t *testing.T) {
	var buf bytes.Buffer
	cw := NewCaptureWriter(&buf, true)
	cw.Write(Record{From: Client, Frame: []byte(`{"apiKey":"sk"}`)})
	_ = cw.Flush()
	if !strings.Contains(buf.String(), `"apiKey":"sk"`) {
		t.Fatalf("--record-raw redacted: %s", buf.String())
	}
}

func TestCaptureReaderVariants(t *testing.T) {
	in := strings.Join([]string{
		`{"from":"agent","frame":{"a" : 1}}`,
		``,
		`{"from":"agent","raw":"Using worktree"}`,
		`not json at all`,
		`{"ts":"2026-08-20T14:52:13.1Z","direction":"sent","frame":{"id":1,"method":"initialize"}}`,
		`{"ts":"2026-08-20T14:52:13.2Z","direction":"received","frame":{"id":1,"result":{}}}`,
		`{"ts":"2026-08-20T14:52:13.3Z","direction":"stderr","frame":"log line"}`,
		`{"ts":"2026-08-20T14:52:13.4Z","direction":"meta","frame":{"note":"x"}}`,
		`{"from":"martian","frame":{}}`,
		`{"from":"client"}`,
		`{"to":"client","frame":{}}`,
		`{"seq":9,"ts":"bad","from":"client","frame":{}}`,
		`{"ts":1764400000123,"direction":"sent","frame":{"n":1}}`,
	}, "\n")
	type got struct {
		line  int
		from  Side
		frame string
		text  string
		err   bool
	}
	var gots []got
	for r, err := range NewCaptureReader(strings.NewReader(in)).Records() {
		g := got{line: r.Line, from: r.From, frame: string(r.Frame), err: err != nil}
		if r.Text != nil {
			g.text = *r.Text
		}
		if r.Stderr != nil {
			g.text = "stderr:" + *r.Stderr
		}
		if err != nil {
			var ce *CaptureError
			if !errors.As(err, &ce) || ce.Line != r.Line {
				t.Fatalf("error %v is not a CaptureError for line %d", err, r.Line)
			}
			g = got{line: r.Line, err: true}
		}
		gots = append(gots, g)
	}
	want := []got{
		{1, Agent, `{"a" : 1}`, "", false},
		{3, Agent, "", "Using worktree", false},
		{4, 0, "", "", true},
		{5, Client, `{"id":1,"method":"initialize"}`, "", false},
		{6, Agent, `{"id":1,"result":{}}`, "", false},
		{7, Agent, "", "stderr:log line", false},
		{8, 0, "", "", false},
		{9, 0, "", "", true},
		{10, 0, "", "", true},
		{11, 0, "", "", true},
		{12, Client, `{}`, "", false}, // an unreadable ts loses the time, not the frame
		{13, Client, `{"n":1}`, "", false},
	}
	if len(gots) != len(want) {
		t.Fatalf("got %d records: %+v", len(gots), gots)
	}
	for i := range want {
		if gots[i] != want[i] {
			t.Errorf("record %d = %+v, want %+v", i, gots[i], want[i])
		}
	}
}

func FuzzCaptureReader(f *testing.F) {
	f.Add([]byte("{\"from\":\"agent\",\"frame\":{}}\n{\"direction\":\"sent\",\"frame\":[]}\n"))
	f.Add([]byte("{\"seq\":1,\"event\":\"exit\",\"code\":1}\nxx\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		last := 0
		for r, err := range NewCaptureReader(bytes.NewReader(b)).Records() {
			if r.Line <= last {
				t.Fatalf("line numbers not increasing: %d after %d", r.Line, last)
			}
			last = r.Line
			if err == nil && r.IsInput() && r.Frame == nil && r.Text == nil && r.Stderr == nil {
				t.Fatal("input record without content")
			}
		}
	})
}

func TestCaptureKeepsWhitespaceAroundFrames(t *testing.T) {
	// P1/R3: a frame with spaces around it is kept exactly (as text), so a
	// replay gives back the bytes the live proxy forwarded.
	var buf bytes.Buffer
	cw := NewCaptureWriter(&buf, false)
	for _, f := range []string{"  {\"a\":1}  ", "{\"b\":2}\t", "{\"c\":3}"} {
		cw.Write(Record{From: Agent, Frame: []byte(f)})
	}
	cw.Write(Record{Event: "start", NonJSON: "forward", Options: []string{"x"}, IDToken: "t1"})
	cw.Write(Record{Event: "signal", Signal: "terminated"})
	_ = cw.Flush()
	var got []string
	for r, err := range NewCaptureReader(&buf).Records() {
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case r.Text != nil:
			got = append(got, "text:"+*r.Text)
		case r.Frame != nil:
			got = append(got, "frame:"+string(r.Frame))
		default:
			got = append(got, r.Event+":"+r.NonJSON+strings.Join(r.Options, ",")+r.IDToken+r.Signal)
		}
	}
	want := []string{"text:  {\"a\":1}  ", "text:{\"b\":2}\t", "frame:{\"c\":3}", "start:forwardxt1", "signal:terminated"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}

func TestParseTS(t *testing.T) {
	tests := []struct {
		name, raw string
		want      time.Time
	}{
		{"rfc3339", `"2026-08-20T14:52:13.1Z"`, time.Date(2026, 8, 20, 14, 52, 13, 1e8, time.UTC)},
		{"unix milliseconds", `1764400000123`, time.UnixMilli(1764400000123).UTC()},
		{"unix seconds", `1764400000.5`, time.Unix(1764400000, 5e8).UTC()},
		{"garbage", `"yesterday"`, time.Time{}},
		{"absent", ``, time.Time{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := parseTS([]byte(tt.raw)); !got.Equal(tt.want) {
				t.Fatalf("parseTS(%s) = %v, want %v", tt.raw, got, tt.want)
			}
		})
	}
}

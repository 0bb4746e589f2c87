package pipe

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

// gatedWriter blocks every Write until the gate is opened, and says when
// the first Write arrived: a disk that has stopped.
type gatedWriter struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	entered chan struct{}
	once    sync.Once
	gate    chan struct{}
}

func newGatedWriter() *gatedWriter {
	return &gatedWriter{entered: make(chan struct{}), gate: make(chan struct{})}
}

func (g *gatedWriter) Write(p []byte) (int, error) {
	g.once.Do(func() { close(g.entered) })
	<-g.gate
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.buf.Write(p)
}

func (g *gatedWriter) String() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.buf.String()
}

// TestCaptureWriterNeverWaitsForTheDisk: with the disk stuck, Write still
// returns at once (the relay goes on); records beyond the queue bound are
// dropped and a "dropped" event with their count takes their place; the
// order and numbering of the records kept are exact (R1).
func TestCaptureWriterNeverWaitsForTheDisk(t *testing.T) {
	g := newGatedWriter()
	cw := NewCaptureWriter(g, false)
	ts := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	cw.SetClock(func() time.Time { return ts })
	cw.SetQueueLimit(3 * (recordOverhead + 11))
	frame := func(i int) []byte { return fmt.Appendf(nil, `{"i":%d}`, 10000+i) } // 11 bytes

	cw.Write(Record{From: Client, Frame: frame(1)})
	<-g.entered // the writer is stuck writing record 1
	for i := 2; i <= 10; i++ {
		// Records 2-4 fit the queue; 5-9 are dropped: none may block.
		if seq := cw.Write(Record{From: Client, Frame: frame(i)}); seq != int64(i) {
			t.Fatalf("record %d numbered %d", i, seq)
		}
		if i == 9 {
			break
		}
	}
	cw.Write(Record{Event: "signal", Signal: "terminated"}) // events are never dropped
	if got := cw.Dropped(); got != 5 {
		t.Fatalf("Dropped() = %d, want 5", got)
	}
	close(g.gate)
	if err := cw.Flush(); err != nil {
		t.Fatal(err)
	}
	cw.Write(Record{From: Agent, Frame: frame(12)}) // the queue has room again
	code := 0
	cw.Write(Record{Event: "exit", Code: &code})
	if err := cw.Close(); err != nil {
		t.Fatal(err)
	}
	const at = `"ts":"2026-12-01T00:00:00Z",`
	want := strings.Join([]string{
		`{"seq":1,` + at + `"from":"client","frame":{"i":10001}}`,
		`{"seq":2,` + at + `"from":"client","frame":{"i":10002}}`,
		`{"seq":3,` + at + `"from":"client","frame":{"i":10003}}`,
		`{"seq":4,` + at + `"from":"client","frame":{"i":10004}}`,
		`{"seq":10,` + at + `"event":"dropped","dropped":5}`,
		`{"seq":11,` + at + `"event":"signal","signal":"terminated"}`,
		`{"seq":12,` + at + `"from":"agent","frame":{"i":10012}}`,
		`{"seq":13,` + at + `"event":"exit","code":0}`,
	}, "\n") + "\n"
	if got := g.String(); got != want {
		t.Fatalf("capture:\n%s\nwant:\n%s", got, want)
	}
}

// TestCaptureWriterDroppedAtTheEnd: records dropped just before Close are
// still reported by a "dropped" event, and read back.
func TestCaptureWriterDroppedAtTheEnd(t *testing.T) {
	g := newGatedWriter()
	cw := NewCaptureWriter(g, false)
	cw.SetQueueLimit(1)
	cw.Write(Record{From: Client, Frame: []byte(`{"a":1}`)})
	<-g.entered
	cw.Write(Record{From: Client, Frame: []byte(`{"a":2}`)}) // queue empty: taken
	cw.Write(Record{From: Client, Frame: []byte(`{"a":3}`)}) // dropped
	close(g.gate)
	if err := cw.Close(); err != nil {
		t.Fatal(err)
	}
	var got []string
	for r, err := range NewCaptureReader(strings.NewReader(g.String())).Records() {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%d %s%s%d", r.Seq, r.Frame, r.Event, r.Dropped))
	}
	want := []string{`1 {"a":1}0`, `2 {"a":2}0`, `4 dropped1`}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("records %q, want %q", got, want)
	}
}

// TestCaptureWriterReportsWriteErrors: a capture that cannot be written is
// not lost silently: Flush and Close return the error.
func TestCaptureWriterReportsWriteErrors(t *testing.T) {
	cw := NewCaptureWriter(failingWriter{}, false)
	cw.Write(Record{From: Client, Frame: []byte(`{}`)})
	if err := cw.Flush(); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("Flush = %v, want the write error", err)
	}
	cw.Write(Record{From: Client, Frame: []byte(`{}`)})
	if err := cw.Close(); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("Close = %v, want the write error", err)
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// TestCaptureWriterRedactsText: secrets in lines that are not valid JSON
// frames are found too (R2); --record-raw keeps them.
func TestCaptureWriterRedactsText(t *testing.T) {
	text := "Authorization: Bearer abcdefghijkl"
	stderr := "using ghp_abcdefghijklmnopqrstuvwxyz0123456789"
	records := []Record{
		{From: Agent, Frame: []byte(`{"jsonrpc":"2.0","params":{"apiKey":"sk-cut-off`)},
		{From: Agent, Frame: []byte(`{"api\u005fkey":"escaped"}`)},
		{From: Agent, Text: &text},
		{From: Agent, Stderr: &stderr},
	}
	for _, raw := range []bool{false, true} {
		var buf bytes.Buffer
		cw := NewCaptureWriter(&buf, raw)
		for _, r := range records {
			cw.Write(r)
		}
		if err := cw.Close(); err != nil {
			t.Fatal(err)
		}
		secrets := []string{"sk-cut-off", "escaped", "abcdefghijkl", "ghp_abc"}
		for _, s := range secrets {
			if got := strings.Contains(buf.String(), s); got != raw {
				t.Errorf("raw=%v: capture contains %q: %v\n%s", raw, s, got, buf.String())
			}
		}
	}
}

// TestCaptureWriterCopiesFrames: the caller may reuse a frame's bytes as
// soon as Write returns (the relay's read buffer).
func TestCaptureWriterCopiesFrames(t *testing.T) {
	g := newGatedWriter()
	cw := NewCaptureWriter(g, false)
	b := []byte(`{"a":1}`)
	cw.Write(Record{From: Client, Frame: b})
	copy(b, `{"b":2}`)
	close(g.gate)
	if err := cw.Close(); err != nil {
		t.Fatal(err)
	}
	if got := g.String(); !strings.Contains(got, `"frame":{"a":1}`) {
		t.Fatalf("capture %s", got)
	}
}

// TestCaptureWriterTakesOneHugeRecord: a frame larger than the whole bound
// is recorded next to small records already queued (the echo of a huge
// frame behind a small event); a second one waiting with it is dropped.
func TestCaptureWriterTakesOneHugeRecord(t *testing.T) {
	g := newGatedWriter()
	cw := NewCaptureWriter(g, false)
	cw.SetQueueLimit(4 * recordOverhead)
	huge := []byte(`{"t":"` + strings.Repeat("A", 8*recordOverhead) + `"}`)
	cw.Write(Record{Event: "start"})
	<-g.entered
	cw.Write(Record{Event: "client-gone"})
	cw.Write(Record{From: Client, Frame: huge}) // taken: the only huge one
	cw.Write(Record{From: Agent, Frame: []byte(`{}`)})
	cw.Write(Record{From: Agent, Frame: huge}) // dropped: one is waiting
	close(g.gate)
	if err := cw.Close(); err != nil {
		t.Fatal(err)
	}
	if n := cw.Dropped(); n != 1 {
		t.Fatalf("Dropped() = %d, want 1", n)
	}
	if got := strings.Count(g.String(), string(huge)); got != 1 {
		t.Fatalf("the capture holds the huge frame %d times, want 1", got)
	}
}

// TestCaptureWriterCloseWithinGivesUpOnASilentTarget: a target that takes
// nothing (a FIFO nobody reads) does not hold Close for ever: CloseWithin
// gives up once the target has been silent for its bound, says so with
// ErrCaptureStalled and counts the records not written; the queued exit
// event is among them (R1).
func TestCaptureWriterCloseWithinGivesUpOnASilentTarget(t *testing.T) {
	g := newGatedWriter()
	defer close(g.gate) // lets the writing goroutine end with the test
	cw := NewCaptureWriter(g, false)
	cw.Write(Record{From: Client, Frame: []byte(`{"a":1}`)})
	<-g.entered // the target takes nothing from now on
	cw.Write(Record{From: Client, Frame: []byte(`{"a":2}`)})
	code := 0
	cw.Write(Record{Event: "exit", Code: &code})
	err := cw.CloseWithin(time.Millisecond)
	if !errors.Is(err, ErrCaptureStalled) {
		t.Fatalf("CloseWithin = %v, want ErrCaptureStalled", err)
	}
	if got := cw.Unwritten(); got != 3 {
		t.Errorf("Unwritten() = %d, want 3", got)
	}
	if err := cw.Close(); !errors.Is(err, ErrCaptureStalled) {
		t.Errorf("a second Close = %v, want the same error", err)
	}
}

// TestCaptureSinkAsWritten: a sink gets the records a capture file holds
// once read back (numbered, timestamped, redacted, invalid frames as
// text), so a program that reads its own session needs no round trip
// through JSONL.
func TestCaptureSinkAsWritten(t *testing.T) {
	ts := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	code := 3
	secret := `{"jsonrpc":"2.0","method":"authenticate","params":{"apiKey":"sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789"}}`
	stderr, text := "token=ghp_abcdefghijklmnopqrstuvwxyz0123456789AB", "Using worktree: /x"
	records := []Record{
		{Event: "start", Version: "1", Argv: []string{"agent"}, Modules: []string{"cursor"}},
		{From: Client, Frame: []byte(secret)},
		{From: Agent, Frame: []byte(`{"jsonrpc":"2.0","id":1,"result":{}} `)}, // space: kept as text
		{From: Agent, Frame: []byte(`{"jsonrpc":`)},                           // invalid: text
		{From: Agent, Stderr: &stderr},
		{From: Agent, Text: &text},
		{Re: 2, Op: OpReply, To: Agent, Frame: []byte(`{"jsonrpc":"2.0","id":1,"result":null}`)},
		{Event: "exit", Code: &code},
	}
	for _, raw := range []bool{false, true} {
		var file bytes.Buffer
		cw := NewCaptureWriter(&file, raw)
		var got []Record
		sink := NewCaptureSink(func(r Record) { got = append(got, r) }, raw)
		for _, w := range []*CaptureWriter{cw, sink} {
			w.SetClock(func() time.Time { return ts })
			for _, r := range records {
				w.Write(r)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
		}
		var want []Record
		for rec, err := range NewCaptureReader(&file).Records() {
			if err != nil {
				t.Fatal(err)
			}
			rec.Line = 0 // a file's line number; a sink has none
			want = append(want, rec)
		}
		if len(got) != len(want) {
			t.Fatalf("raw %v: the sink got %d records, the file holds %d", raw, len(got), len(want))
		}
		if redacted := !bytes.Contains(got[1].Frame, []byte("sk-ant-")) && !strings.Contains(*got[4].Stderr, "ghp_"); redacted == raw {
			t.Errorf("raw %v: the sink's secrets redacted = %v", raw, redacted)
		}
		for i := range want {
			if !reflect.DeepEqual(got[i], want[i]) {
				t.Errorf("raw %v: record %d:\nsink %+v\nfile %+v", raw, i, got[i], want[i])
			}
		}
	}
}

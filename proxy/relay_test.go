package proxy

import (
	"bytes"
	"io"
	"testing"
	"testing/iotest"

	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/rewrite/rewritetest"
	"github.com/acp-normalize/acp-normalize/route"
)

// relayThroughLoop runs the agent direction's loop (c.relay) over in and
// returns what it wrote to the client.
func relayThroughLoop(t *testing.T, in io.Reader) []byte {
	t.Helper()
	var toClient, toAgent bytes.Buffer
	c := &connection{router: newTestRouter(t), stop: make(chan struct{})}
	defer close(c.stop)
	c.writers[pipe.Client] = pipe.NewWriter(&toClient)
	c.writers[pipe.Agent] = pipe.NewWriter(&toAgent)
	for _, side := range []pipe.Side{pipe.Client, pipe.Agent} {
		c.queues[side] = newSendQueue(c.writers[side], c.stop, func(err error) { t.Errorf("writing to %s: %v", side, err) })
	}
	if err := c.relay(pipe.Agent, in); err != nil {
		t.Fatal(err)
	}
	return toClient.Bytes()
}

// relayFrameByFrame is the reference: each frame routed and every output
// for the client written on its own.
func relayFrameByFrame(t *testing.T, in []byte) []byte {
	t.Helper()
	r := newTestRouter(t)
	rd := pipe.NewReader(bytes.NewReader(in))
	var out []byte
	for {
		f, err := rd.ReadFrame()
		if err != nil {
			return out
		}
		for _, o := range r.Handle(pipe.Agent, f, nil) {
			if o.To == pipe.Client {
				out = append(append(out, o.Frame...), '\n')
			}
		}
	}
}

var relayInputs = map[string]string{
	"P1 passthrough run":          "{\"a\":1}\n{\"b\":2}\n{\"c\":3}\n",
	"P2 replaced frame mid-run":   "{\"a\":1}\n{\"method\":\"test/replace\",\"params\":{\"x\":1}}\n{\"c\":3}\n",
	"P2 emitted frames mid-run":   "{\"a\":1}\n{\"method\":\"test/emit\"}\n{\"c\":3}\n",
	"dropped frame mid-run":       "{\"a\":1}\n{\"method\":\"test/drop\"}\n{\"c\":3}\n",
	"F1 crlf frame splits a run":  "{\"a\":1}\n{\"b\":2}\r\n{\"c\":3}\n",
	"F1 bom and blank lines":      "\xEF\xBB\xBF{\"a\":1}\n\n  \n{\"b\":2}\n",
	"F1 blank lines mid-run":      "{\"a\":1}\n\n{\"b\":2}\n\t\n{\"c\":3}\n",
	"F2 non-json dropped mid-run": "{\"a\":1}\nUsing worktree: /x\n{\"b\":2}\n",
	"no final newline":            "{\"a\":1}\n{\"b\":2}",
}

func TestRelayWritesRunsInOrder(t *testing.T) {
	readers := map[string]func(io.Reader) io.Reader{
		"whole":   func(r io.Reader) io.Reader { return r },
		"onebyte": iotest.OneByteReader,
		"half":    iotest.HalfReader,
		"dataerr": iotest.DataErrReader,
	}
	for name, in := range relayInputs {
		for rname, wrap := range readers {
			t.Run(name+"/"+rname, func(t *testing.T) {
				got := relayThroughLoop(t, wrap(bytes.NewReader([]byte(in))))
				if want := relayFrameByFrame(t, []byte(in)); !bytes.Equal(got, want) {
					t.Fatalf("relay wrote\n%q\nframe by frame\n%q", got, want)
				}
			})
		}
	}
}

// FuzzRelayLoop: the loop that forwards runs of frames straight from the
// read buffer writes exactly what routing each frame on its own writes
// (P1, P2), however the input is split into reads.
func FuzzRelayLoop(f *testing.F) {
	for _, in := range relayInputs {
		f.Add([]byte(in), uint8(0))
	}
	f.Fuzz(func(t *testing.T, in []byte, mode uint8) {
		if bytes.Contains(in, []byte("acp-normalize")) || bytes.Contains(in, []byte("test/")) && bytes.Contains(in, []byte(`"id"`)) {
			t.Skip("proxy ids and module requests answered to the agent are other tests' subject")
		}
		wraps := []func(io.Reader) io.Reader{
			func(r io.Reader) io.Reader { return r },
			iotest.OneByteReader,
			iotest.HalfReader,
			iotest.DataErrReader,
		}
		got := relayThroughLoop(t, wraps[int(mode)%len(wraps)](bytes.NewReader(in)))
		if want := relayFrameByFrame(t, in); !bytes.Equal(got, want) {
			t.Fatalf("relay wrote\n%q\nframe by frame\n%q", got, want)
		}
	})
}

// newTestRouter is a router with one module that replaces, drops and
// emits frames (methods test/replace, test/drop, test/emit), so that the
// relay's runs are split by every kind of change.
func newTestRouter(t *testing.T) *route.Router {
	t.Helper()
	mod := rewritetest.FuncModule("test", "replaces, drops and emits frames", []string{`"test/`},
		func(f *rewrite.Frame) (rewrite.Verdict, error) {
			var v rewrite.Verdict
			switch f.Method() {
			case "test/replace":
				out, err := rewrite.Set(f.Raw, []byte(`"replaced"`), "params", "x")
				if err != nil {
					return v, err
				}
				v.Replace(out)
			case "test/drop":
				v.DropFrame()
			case "test/emit":
				for n := 1; n <= 2; n++ {
					emit, err := rewrite.Notification("test/emitted", map[string]int{"n": n})
					if err != nil {
						return v, err
					}
					v.Send(f.From.Other(), emit)
				}
			}
			return v, nil
		})
	r, err := route.NewRouter(route.RouterConfig{Modules: []rewrite.Module{mod}, Version: "9.9.9"})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

package cursor_test

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/rewrite/cursor"
	"github.com/acp-normalize/acp-normalize/rewrite/rewritetest"
	"github.com/acp-normalize/acp-normalize/route"
	"github.com/acp-normalize/acp-normalize/route/routetest"

	"golang.org/x/tools/txtar"
)

// FuzzCursor feeds arbitrary frames through a Router with the cursor
// module (a small cap, so eviction runs too). Each input line is a frame;
// its first byte picks the side (even: client, odd: agent), and a line
// "G" means the client went away. It checks: no panic (P5), a frame
// forwarded unchanged is byte-identical to its input (P1), and every
// frame the module wrote or changed is valid JSON.
func FuzzCursor(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "golden", "*.txtar"))
	for _, path := range files {
		a, err := txtar.ParseFile(path)
		if err != nil {
			f.Fatal(err)
		}
		var seed bytes.Buffer
		for _, file := range a.Files {
			if file.Name != "input.jsonl" {
				continue
			}
			for _, in := range routetest.ReadInput(f, file.Data) {
				switch {
				case in.Gone != 0:
					seed.WriteString("G\n")
					continue
				case in.Frame == nil:
					continue // a non-JSON line: the fuzzer finds those
				case in.From == pipe.Client:
					seed.WriteByte('c')
				default:
					seed.WriteByte('a')
				}
				seed.Write(in.Frame)
				seed.WriteByte('\n')
			}
		}
		if seed.Len() < 20000 {
			f.Add(seed.Bytes())
		}
	}
	f.Add([]byte(`a{"jsonrpc":"2.0","id":0,"method":"cursor/task","params":{"toolCallId":"x\n"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		logs := rewritetest.NewLogRecorder()
		logs.FailOnPanic = t
		r, err := route.NewRouter(route.RouterConfig{
			Modules: []rewrite.Module{cursor.Module()}, MaxEntries: 4,
			Logger:  logs.Logger(),
			Version: "fuzz",
		})
		if err != nil {
			t.Fatal(err)
		}
		check := func(outs []route.Out, in []byte) {
			for _, o := range outs {
				if o.Op == "" {
					if !bytes.Equal(o.Frame, in) {
						t.Fatalf("forwarded frame changed:\n in: %q\nout: %q", in, o.Frame)
					}
					continue
				}
				if !json.Valid(o.Frame) {
					t.Fatalf("invalid JSON written (%s to %s) for input %q:\n%q", o.Op, o.To, in, o.Frame)
				}
			}
		}
		for _, line := range bytes.Split(data, []byte("\n")) {
			if len(line) == 0 {
				continue
			}
			if string(line) == "G" {
				check(r.ClientGone(nil), nil)
				continue
			}
			side := pipe.Client
			if line[0]%2 == 1 {
				side = pipe.Agent
			}
			frame := line[1:]
			if len(frame) == 0 {
				continue
			}
			check(r.Handle(side, frame, nil), frame)
		}
		check(r.ClientGone(nil), nil)
	})
}

// FuzzCursorDifferential: a session, the same session with every
// frame spelled otherwise (blanks, escaped key and value characters,
// reordered members) and the same session with decoy members before some
// members under the same key (a parser reads the last one) get the same
// verdicts and snapshots, frame for frame. Seeds: the golden cases and the
// small recordings.
func FuzzCursorDifferential(f *testing.F) {
	routetest.FuzzDifferential(f, capturesDir, cursor.Module())
}

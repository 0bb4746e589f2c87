package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite"
)

func TestSplitAgentArgv(t *testing.T) {
	app := newApp(streams{})
	app.Commands = append(app.Commands, cliCommandNamed("replay"))
	tests := []struct {
		name     string
		args     []string
		cli      []string
		agent    []string
		hasAgent bool
	}{
		{"agent after --", []string{"p", "--log-level", "debug", "--", "cursor-agent", "acp"}, []string{"p", "--log-level", "debug"}, []string{"cursor-agent", "acp"}, true},
		{"subcommand name after -- is the agent", []string{"p", "--", "replay", "x"}, []string{"p"}, []string{"replay", "x"}, true},
		{"agent's own -- kept", []string{"p", "--", "a", "--", "b"}, []string{"p"}, []string{"a", "--", "b"}, true},
		{"agent flags kept", []string{"p", "--", "a", "--version"}, []string{"p"}, []string{"a", "--version"}, true},
		{"subcommand before -- keeps its args", []string{"p", "replay", "--", "-file"}, []string{"p", "replay", "--", "-file"}, nil, false},
		{"no --", []string{"p", "cursor-agent", "acp"}, []string{"p", "cursor-agent", "acp"}, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cli, agent, ok := splitAgentArgv(tt.args, app)
			if !slices.Equal(cli, tt.cli) || !slices.Equal(agent, tt.agent) || ok != tt.hasAgent {
				t.Fatalf("split = %q %q %v; want %q %q %v", cli, agent, ok, tt.cli, tt.agent, tt.hasAgent)
			}
		})
	}
}

func TestSelectModules(t *testing.T) {
	mk := func(name string) rewrite.Module {
		return rewrite.Module{Name: name, Doc: "d", Triggers: []string{"x"}, New: func(rewrite.Env) rewrite.Rewriter { return nil }}
	}
	all := []rewrite.Module{mk("first"), mk("second")}
	tests := []struct {
		spec string
		want []string
		bad  bool
	}{
		{"all", []string{"first", "second"}, false},
		{"", []string{"first", "second"}, false},
		{"none", nil, false},
		{"second", []string{"second"}, false},
		{" second , first ,second", []string{"second", "first"}, false},
		{"third", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			got, err := selectModules(all, tt.spec)
			if (err != nil) != tt.bad {
				t.Fatalf("err = %v", err)
			}
			var names []string
			for _, m := range got {
				names = append(names, m.Name)
			}
			if !slices.Equal(names, tt.want) {
				t.Fatalf("modules = %v, want %v", names, tt.want)
			}
		})
	}
}

// TestCheckVendor: --vendor must name a module of the module list that
// waits for its agent's agentInfo.name (V1); any other value would be
// silently ignored. The vendors are derived from the module list.
func TestCheckVendor(t *testing.T) {
	all := allModules()
	vendors := rewrite.VendorNames(all)
	if len(vendors) == 0 {
		t.Fatal("no module waits for agentInfo")
	}
	have := "(have: " + strings.Join(vendors, ", ") + ")"
	type test struct {
		name     string
		settings rewrite.Settings
		wantErr  string
	}
	tests := []test{
		{"not given", rewrite.Settings{}, ""},
		{"empty", rewrite.Settings{rewrite.VendorOption: ""}, ""},
		{"no such module", rewrite.Settings{rewrite.VendorOption: "no-such"}, `unknown vendor "no-such" ` + have},
	}
	for _, m := range all {
		want := ""
		if !slices.Contains(vendors, m.Name) {
			want = `unknown vendor "` + m.Name + `" ` + have // it names no agent
		}
		tests = append(tests, test{"module " + m.Name, rewrite.Settings{rewrite.VendorOption: m.Name}, want})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkVendor(all, tt.settings)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.wantErr {
				t.Fatalf("checkVendor = %q, want %q", got, tt.wantErr)
			}
		})
	}
}

func TestModuleListIsValid(t *testing.T) {
	if err := rewrite.Validate(allModules()); err != nil {
		t.Fatal(err)
	}
}

func TestUseColor(t *testing.T) {
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }
	if useColor(&bytes.Buffer{}, env(nil)) {
		t.Fatal("colour on a buffer")
	}
	f, err := os.CreateTemp(t.TempDir(), "log")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if useColor(f, env(nil)) {
		t.Fatal("colour on a regular file")
	}
	tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0)
	if err != nil {
		t.Skip("no terminal to test the TTY case")
	}
	defer tty.Close()
	if !useColor(tty, env(nil)) {
		t.Fatal("no colour on a terminal")
	}
	if useColor(tty, env(map[string]string{"NO_COLOR": "1"})) || useColor(tty, env(map[string]string{"TERM": "dumb"})) {
		t.Fatal("colour despite NO_COLOR or TERM=dumb")
	}
}

// blockedWriter never returns from Write until released, like a pipe
// nobody reads.
type blockedWriter struct{ release chan struct{} }

func (b blockedWriter) Write(p []byte) (int, error) { <-b.release; return len(p), nil }

func TestBackgroundWriterNeverBlocks(t *testing.T) {
	// F4: neither logging nor the agent's stderr copy may stall when
	// stderr is not read; what does not fit in the bound is dropped whole
	// and counted.
	w := blockedWriter{release: make(chan struct{})}
	bw := newBackgroundWriter(w, 100)
	done := make(chan struct{})
	go func() {
		for range 1000 {
			_, _ = bw.Write([]byte("a log line\n"))
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Write blocked on a stalled stderr")
	}
	lost := bw.Close(50 * time.Millisecond) // bounded although the writer is stuck
	// The goroutine's stuck write has at most 100 bytes (9 lines of 11),
	// and at most as many wait behind it.
	if lost.Writes < 1000-2*9 || lost.Bytes != lost.Writes*11 {
		t.Fatalf("dropped %+v of 1000 writes of 11 bytes past a 100-byte bound", lost)
	}
	close(w.release)
}

func TestBackgroundWriterDelivers(t *testing.T) {
	var out bytes.Buffer
	bw := newBackgroundWriter(&out, 1<<10)
	_, _ = bw.Write([]byte("one\n"))
	_, _ = bw.Write([]byte("two\n"))
	if lost := bw.Close(time.Second); lost.Writes != 0 {
		t.Fatalf("dropped %+v", lost)
	}
	if out.String() != "one\ntwo\n" {
		t.Fatalf("got %q", out.String())
	}
}

// TestBackgroundWriterSaysWhatItDropped: the count of dropped lines
// reaches stderr once it drains (F4), and the writes are whole lines.
func TestBackgroundWriterSaysWhatItDropped(t *testing.T) {
	var out bytes.Buffer
	w := &gatedWriter{gate: make(chan struct{}), entered: make(chan struct{}), w: &out}
	bw := newBackgroundWriter(w, 8)
	_, _ = bw.Write([]byte("first\n")) // taken by the goroutine, which blocks on the gate
	<-w.entered
	_, _ = bw.Write([]byte("second\n"))
	_, _ = bw.Write([]byte("third\n")) // does not fit
	close(w.gate)
	if lost := bw.Close(10 * time.Second); lost != (droppedWrites{Writes: 1, Bytes: 6}) {
		t.Fatalf("dropped %+v", lost)
	}
	want := "first\nsecond\nacp-normalize: 1 lines (6 bytes) not written to stderr: stderr was not being read\n"
	if out.String() != want {
		t.Fatalf("got %q, want %q", out.String(), want)
	}
}

// gatedWriter blocks its writes until gate is closed; entered is closed
// at the first write.
type gatedWriter struct {
	gate    chan struct{}
	once    sync.Once
	entered chan struct{}
	w       io.Writer
}

func (g *gatedWriter) Write(p []byte) (int, error) {
	g.once.Do(func() { close(g.entered) })
	<-g.gate
	return g.w.Write(p)
}

// failingFile fails every write and its Close.
type failingFile struct{}

func (failingFile) Write([]byte) (int, error) { return 0, errors.New("disk full") }
func (failingFile) Close() error              { return errors.New("close failed") }

// TestLostCaptureIsReported pins that a recording that cannot be written
// out is an error (logged by the proxy), and turns a successful exit into
// exit status 1 while keeping an agent's failure code.
func TestLostCaptureIsReported(t *testing.T) {
	target := &recordTarget{path: "capture.jsonl", file: failingFile{}}
	target.opened.Store(true)
	capture := pipe.NewCaptureWriter(target, false)
	capture.Write(pipe.Record{Event: "start"})
	err := finishCapture(capture, target, 0)
	if err == nil || !strings.Contains(err.Error(), "disk full") || !strings.Contains(err.Error(), "close failed") {
		t.Fatalf("finishCapture = %v, want the write and the close error", err)
	}
	tests := []struct{ agent, want int }{{0, exitFailure}, {42, 42}}
	for _, tt := range tests {
		if got := codeAfterLostCapture(tt.agent); got != tt.want {
			t.Errorf("agent exit %d with a lost capture: exit %d, want %d", tt.agent, got, tt.want)
		}
	}
}

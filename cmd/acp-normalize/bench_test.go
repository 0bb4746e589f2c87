//go:build unix

package main

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/proxy"
	"github.com/acp-normalize/acp-normalize/rewrite/rewritetest"
)

// relayCommands are the two relays compared in one run: plain cat, and
// cat behind acp-normalize with every module on.
func relayCommands(args ...string) map[string][]string {
	return map[string][]string{
		"cat":           append([]string{"cat"}, args...),
		"acp-normalize": append([]string{proxyBinary, "--log-level", "error", "--", "cat"}, args...),
	}
}

// BenchmarkProcessThroughput: an agent (cat of a file) streams 100k
// frames; how fast do they reach the client, with and without the proxy?
func BenchmarkProcessThroughput(b *testing.B) {
	const frames = 100_000
	traffic := rewritetest.AgentTraffic(frames)
	file := filepath.Join(b.TempDir(), "traffic.jsonl")
	if err := os.WriteFile(file, traffic, 0o600); err != nil {
		b.Fatal(err)
	}
	for _, name := range []string{"cat", "acp-normalize"} {
		argv := relayCommands(file)[name]
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(traffic)))
			for i := 0; i < b.N; i++ {
				cmd := exec.Command(argv[0], argv[1:]...)
				out, err := cmd.StdoutPipe()
				if err != nil {
					b.Fatal(err)
				}
				if err := cmd.Start(); err != nil {
					b.Fatal(err)
				}
				n, err := io.Copy(io.Discard, out)
				if err != nil || n != int64(len(traffic)) {
					b.Fatalf("relayed %d of %d bytes: %v", n, len(traffic), err)
				}
				if err := cmd.Wait(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(frames)*float64(b.N)/b.Elapsed().Seconds(), "frames/s")
		})
	}
}

// BenchmarkProcessRoundTrip: one frame at a time, written and read back
// through cat, with and without the proxy (which the frame then crosses
// twice): the latency the flush-when-idle writer must keep low.
func BenchmarkProcessRoundTrip(b *testing.B) {
	frame := []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"ping"}}}}` + "\n")
	for _, name := range []string{"cat", "acp-normalize"} {
		argv := relayCommands()[name]
		b.Run(name, func(b *testing.B) {
			cmd := exec.Command(argv[0], argv[1:]...)
			in, _ := cmd.StdinPipe()
			outPipe, _ := cmd.StdoutPipe()
			if err := cmd.Start(); err != nil {
				b.Fatal(err)
			}
			out := bufio.NewReader(outPipe)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := in.Write(frame); err != nil {
					b.Fatal(err)
				}
				line, err := out.ReadBytes('\n')
				if err != nil || !bytes.Equal(line, frame) {
					b.Fatalf("echo %q: %v", line, err)
				}
			}
			b.StopTimer()
			in.Close()
			_ = cmd.Wait()
		})
	}
}

// BenchmarkRouterAllModules routes agent output through the router with
// the real module list: the per-frame cost users pay, triggers included.
func BenchmarkRouterAllModules(b *testing.B) {
	r, err := proxy.NewRouter(proxy.RouterConfig{Modules: allModules(), Version: version})
	if err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		frames int
		every  int // one tool-call frame every N frames
	}{{"chunks", 1, 0}, {"mixed", 1000, 50}} {
		traffic := rewritetest.AgentTraffic(tc.frames)
		if tc.every == 0 {
			traffic = []byte(rewritetest.Chunk + "\n")
		}
		frames := bytes.Split(bytes.TrimSuffix(traffic, []byte("\n")), []byte("\n"))
		b.Run(tc.name, func(b *testing.B) {
			var outs []proxy.Out
			b.ReportAllocs()
			b.SetBytes(int64(len(traffic) / len(frames)))
			for i := 0; i < b.N; i++ {
				outs = r.Handle(pipe.Agent, frames[i%len(frames)], outs[:0])
			}
		})
	}
}

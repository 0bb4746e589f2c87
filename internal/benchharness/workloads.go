package benchharness

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
)

// Sentinel is the last frame of every streaming workload: when the client
// has read it, the workload is delivered. Agent frames use standard ACP
// methods: the proxy answers unknown ones itself (rule V7).
const Sentinel = `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"bench","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"bench: end"}}}}` + "\n"

// startLine is the client's first frame; the streaming agent waits for it.
const startLine = `{"jsonrpc":"2.0","method":"bench/start"}` + "\n"

// promptLine starts the burst workload: a request the burst's last frame
// answers.
const promptLine = `{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"` + sessionID + `","prompt":[{"type":"text","text":"go"}]}}` + "\n"

const sessionID = "3f9a1c2e-7b4d-4e8a-9c61-5d2f0b8e4a17"

// Kind says how a workload is driven.
type Kind int

const (
	// Stream: the agent writes File after the client's Start line.
	Stream Kind = iota
	// RoundTrip: the client writes Ping, the echo agent sends it back,
	// one at a time.
	RoundTrip
)

// Workload is one measured scenario.
type Workload struct {
	Name string
	Kind Kind
	// Stream: the agent's output (ending with Sentinel), its size and
	// frame count, and the client's first line.
	File   string
	Bytes  int64
	Frames int64
	Start  string
	// RoundTrip: the frame sent and echoed, and how many times.
	Ping       []byte
	Iterations int
}

// Sizes scales the workloads.
type Sizes struct {
	StormChunks int   // agent_message_chunk frames of the chunk storm
	MixedChunks int   // chunks of the mixed session
	HugeLine    int64 // bytes of the one huge line
	SmallPings  int   // round trips of the 300-byte frame
	LargePings  int   // round trips of the 2 MB frame
	// MemLines are the sizes of the lines of the memory rows (peak RSS
	// by frame size), besides HugeLine.
	MemLines []int64
	// SessionFrames are the agent frames of a recorded session (the
	// command reads them from a capture, DefaultSession by default):
	// repeated to SessionBytes, they make the session workload (a real
	// session's shape); none when empty.
	SessionFrames []string
	SessionBytes  int64
}

// FullSizes are the sizes of `make bench`; ShortSizes of `make bench-short`.
var (
	FullSizes = Sizes{StormChunks: 400_000, MixedChunks: 200_000, HugeLine: 256 << 20, SmallPings: 4000, LargePings: 150,
		MemLines: []int64{1 << 20, 16 << 20, 64 << 20}, SessionBytes: 100 << 20}
	ShortSizes = Sizes{StormChunks: 100_000, MixedChunks: 40_000, HugeLine: 32 << 20, SmallPings: 1000, LargePings: 40,
		MemLines: []int64{1 << 20, 16 << 20}, SessionBytes: 20 << 20}
)

// Generate writes every workload's file under dir and returns them in the
// order they are run. The content is deterministic for a given seed.
func Generate(dir string, sz Sizes, seed uint64) ([]Workload, error) {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	var out []Workload
	gens := []struct {
		name  string
		start string
		write func(g *generator)
	}{
		{"chunk-storm", startLine, func(g *generator) {
			for range sz.StormChunks {
				g.chunk()
			}
		}},
		{"mixed", startLine, func(g *generator) { g.mixed(sz.MixedChunks) }},
		{"burst-5000", promptLine, func(g *generator) {
			for range 5000 {
				g.chunk()
			}
			g.line(`{"jsonrpc":"2.0","id":1,"result":{"stopReason":"end_turn"}}`)
		}},
		{fmt.Sprintf("line-%dMiB", sz.HugeLine>>20), startLine, func(g *generator) { g.hugeLine(sz.HugeLine) }},
	}
	if frames := sz.SessionFrames; len(frames) > 0 {
		gens = append(gens, struct {
			name  string
			start string
			write func(g *generator)
		}{"session", startLine, func(g *generator) {
			for g.bytes < sz.SessionBytes {
				for _, f := range frames {
					g.line(f)
				}
			}
		}})
	}
	for _, size := range sz.MemLines {
		gens = append(gens, struct {
			name  string
			start string
			write func(g *generator)
		}{fmt.Sprintf("line-%dMiB", size>>20), startLine, func(g *generator) { g.hugeLine(size) }})
	}
	for _, gen := range gens {
		w, err := writeWorkload(filepath.Join(dir, gen.name+".jsonl"), rng, gen.write)
		if err != nil {
			return nil, err
		}
		w.Name, w.Start = gen.name, gen.start
		out = append(out, w)
	}
	out = append(out,
		Workload{Name: "rtt-300B", Kind: RoundTrip, Ping: pingFrame(300, rng), Iterations: sz.SmallPings},
		Workload{Name: "rtt-2MB", Kind: RoundTrip, Ping: pingFrame(2<<20, rng), Iterations: sz.LargePings},
	)
	return out, nil
}

func writeWorkload(path string, rng *rand.Rand, write func(*generator)) (Workload, error) {
	f, err := os.Create(path)
	if err != nil {
		return Workload{}, fmt.Errorf("creating workload: %w", err)
	}
	g := &generator{w: bufio.NewWriterSize(f, 1<<20), rng: rng}
	write(g)
	g.raw(Sentinel)
	if err := g.w.Flush(); err != nil {
		f.Close()
		return Workload{}, fmt.Errorf("writing %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return Workload{}, fmt.Errorf("writing %s: %w", path, err)
	}
	return Workload{Kind: Stream, File: path, Bytes: g.bytes, Frames: g.frames}, nil
}

// generator writes frames as ACP agents spell them (no escaping of < > &,
// raw UTF-8).
type generator struct {
	w      *bufio.Writer
	rng    *rand.Rand
	bytes  int64
	frames int64
	ids    int
	tools  int
}

func (g *generator) raw(s string) {
	g.w.WriteString(s)
	g.bytes += int64(len(s))
	g.frames++
}

func (g *generator) line(s string) { g.raw(s + "\n") }

// textPieces make chat text: JSON-escaped quotes and backslashes, the
// characters HTML-minded encoders escape, and non-ASCII.
var textPieces = []string{
	"the ", "answer ", "is ", "func ", "x := ", `\"quoted\" `, `C:\\path\\file `, "<tag> ",
	"a && b ", "naïve ", "日本語 ", "🙂 ", `\n`, "Größe ", "return nil ", "{}; ", "-> ",
}

func (g *generator) text(min, max int) string {
	n := min + g.rng.IntN(max-min+1)
	var b strings.Builder
	for b.Len() < n {
		b.WriteString(textPieces[g.rng.IntN(len(textPieces))])
	}
	return b.String()
}

func (g *generator) update(u string) {
	g.line(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"` + sessionID + `","update":` + u + `}}`)
}

func (g *generator) chunk() {
	g.update(`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"` + g.text(20, 200) + `"}}`)
}

// mixed is a session: the chunk storm with a tool call (one in 20 a 1-5
// MB file read) every 200 chunks, a Cursor subagent triple every 1000, a
// todo update every 1500 and a base64 image every 3000.
func (g *generator) mixed(chunks int) {
	for i := range chunks {
		g.chunk()
		switch {
		case i%3000 == 2999:
			g.update(`{"sessionUpdate":"agent_message_chunk","content":{"type":"image","mimeType":"image/png","data":"` + g.base64(256<<10+g.rng.IntN(768<<10)) + `"}}`)
		case i%1500 == 1499:
			g.todos()
		case i%1000 == 999:
			g.subagent()
		case i%200 == 199:
			g.toolCall(i%4000 == 3799)
		}
	}
}

func (g *generator) toolCall(bigRead bool) {
	g.tools++
	id := fmt.Sprintf("tool_%08d", g.tools)
	g.update(`{"sessionUpdate":"tool_call","toolCallId":"` + id + `","title":"Read file","kind":"read","status":"pending","rawInput":{"path":"/src/main.go"}}`)
	size := 200 + g.rng.IntN(2000)
	if bigRead {
		size = 1<<20 + g.rng.IntN(4<<20)
	}
	g.update(`{"sessionUpdate":"tool_call_update","toolCallId":"` + id + `","status":"completed","content":[{"type":"content","content":{"type":"text","text":"` + g.text(size, size) + `"}}]}`)
}

const base64Alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

func (g *generator) base64(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = base64Alphabet[g.rng.IntN(64)]
	}
	return string(b)
}

// hugeLine writes one message chunk of size bytes (newline included).
func (g *generator) hugeLine(size int64) {
	head := `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"` + sessionID + `","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"`
	tail := `"}}}}` + "\n"
	g.w.WriteString(head)
	block := []byte(strings.Repeat(g.text(4096, 4096), 16))
	left := size - int64(len(head)+len(tail))
	for left > 0 {
		if left < int64(len(block)) {
			// No escape sequence cut in half at the end.
			g.w.WriteString(strings.Repeat("x", int(left)))
			break
		}
		g.w.Write(block)
		left -= int64(len(block))
	}
	g.w.WriteString(tail)
	g.bytes += size
	g.frames++
}

// pingFrame is a message chunk of exactly size bytes, newline included.
func pingFrame(size int, rng *rand.Rand) []byte {
	head := `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"` + sessionID + `","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"`
	tail := `"}}}}` + "\n"
	b := make([]byte, 0, size)
	b = append(b, head...)
	for len(b) < size-len(tail) {
		b = append(b, 'a'+byte(rng.IntN(26)))
	}
	return append(b, tail...)
}

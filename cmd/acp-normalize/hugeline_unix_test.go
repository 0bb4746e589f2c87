//go:build unix

package main

import (
	"bytes"
	"io"
)

// The long line of TestE2EF3LongLineStreams: a message chunk whose text
// repeats hugeBlock (escapes, non-ASCII, a quote: what a relay that
// re-encoded or cut at the wrong place would change).
const (
	hugeHead = `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"`
	hugeTail = `"}}}}`
	// afterHugeLine is the frame the agent writes after it (P2).
	afterHugeLine = `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"after"}}}}` + "\n"
)

// hugeBlock is 64 KiB of chat text, so the long line's text is easy to
// check as it arrives.
var hugeBlock = func() []byte {
	piece := `func x() { return \"naïve\" } // 日本語 🙂 C:\\path\\file \n`
	b := bytes.Repeat([]byte(piece), (64<<10)/len(piece)+1)
	b = b[:64<<10]
	for i := len(b) - 1; b[i] == '\\' || b[i]&0xC0 == 0x80 || b[i] >= 0xC0; i-- {
		b[i] = 'x' // no escape or character cut in half at the block's end
	}
	return b
}()

// writeHugeLine writes the long line of size bytes (its newline included)
// in 1 MiB writes: the agent side of TestE2EF3LongLineStreams.
func writeHugeLine(w io.Writer, size int) error {
	text := size - len(hugeHead) - len(hugeTail) - 1
	buf := make([]byte, 0, 1<<20+len(hugeBlock))
	buf = append(buf, hugeHead...)
	for off := 0; off < text; {
		n := min(len(hugeBlock), text-off)
		buf = append(buf, hugeBlock[:n]...)
		off += n
		if len(buf) >= 1<<20 {
			if _, err := w.Write(buf); err != nil {
				return err
			}
			buf = buf[:0]
		}
	}
	buf = append(append(buf, hugeTail...), '\n')
	_, err := w.Write(buf)
	return err
}

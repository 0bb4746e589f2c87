package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"hash/crc32"
	imgpng "image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// screenshotKey names the text chunk of docs/viewer.png that holds the
// viewer's header as the page showed it when the screenshot was taken
// (make viewer-screenshot): the facts by name, as JSON.
const screenshotKey = "acp-normalize viewer header"

// screenshotPNG is the README's screenshot of the viewer.
var screenshotPNG = filepath.Join(repoRoot, "docs", "viewer.png")

// TestViewerScreenshotIsCurrent: docs/viewer.png shows what this build
// shows. Compared, from the header text the screenshot's page showed
// (kept in the PNG by make viewer-screenshot; the pixels are not read):
// the capture, which must be the Makefile's DEMO_CAPTURE; the modules,
// which must be this build's module list in its order; and the version of
// acp-normalize, whose release (X.Y.Z, without the pre-release or
// pseudo-version part that changes with every commit) must be this
// build's. A screenshot that says 0.1.0 beside a 0.2.0 build, or lacks a
// module, fails here.
func TestViewerScreenshotIsCurrent(t *testing.T) {
	t.Parallel()
	png, err := os.ReadFile(screenshotPNG)
	if err != nil {
		t.Fatal(err)
	}
	text, err := pngText(png, screenshotKey)
	if err != nil {
		t.Fatalf("%s: %v (make viewer-screenshot writes it)", screenshotPNG, err)
	}
	var facts map[string]string
	if err := json.Unmarshal([]byte(text), &facts); err != nil {
		t.Fatalf("%s: the header text %q: %v", screenshotPNG, text, err)
	}
	var names []string
	for _, m := range allModules() {
		names = append(names, m.Name)
	}
	makefile, err := os.ReadFile(filepath.Join(repoRoot, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	demo := regexp.MustCompile(`(?m)^DEMO_CAPTURE\s*\?=\s*(\S+)`).FindSubmatch(makefile)
	if demo == nil {
		t.Fatal("Makefile: no DEMO_CAPTURE")
	}
	out, err := exec.Command(proxyBinary, "version", "--json").Output()
	if err != nil {
		t.Fatal(err)
	}
	var build struct{ Version string }
	if err := json.Unmarshal(out, &build); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ fact, got, want string }{
		{"capture", facts["capture"], string(demo[1])},
		{"modules", facts["modules"], strings.Join(names, ", ")},
		{"acp-normalize", versionRelease(facts["acp-normalize"]), versionRelease(build.Version)},
	} {
		if c.got != c.want {
			t.Errorf("docs/viewer.png shows %s %q, this build %q: run make viewer-screenshot", c.fact, c.got, c.want)
		}
	}
}

// versionRelease is the X.Y.Z of a version: "0.0.0" for 0.0.0-devel and
// the pseudo-versions of a clone, 0.1.0 for 0.1.0 and 0.1.0-rc.1.
func versionRelease(v string) string {
	if i := strings.IndexAny(v, "-+"); i >= 0 {
		return v[:i]
	}
	return v
}

// pngChunk is one chunk of a PNG file.
type pngChunk struct {
	typ  string
	data []byte
}

var pngSignature = []byte("\x89PNG\r\n\x1a\n")

func pngChunks(png []byte) ([]pngChunk, error) {
	if !bytes.HasPrefix(png, pngSignature) {
		return nil, errors.New("not a PNG file")
	}
	var chunks []pngChunk
	for rest := png[len(pngSignature):]; len(rest) > 0; {
		if len(rest) < 12 {
			return nil, errors.New("a cut-off chunk")
		}
		n := binary.BigEndian.Uint32(rest)
		if uint64(n)+12 > uint64(len(rest)) {
			return nil, errors.New("a chunk longer than the file")
		}
		chunks = append(chunks, pngChunk{string(rest[4:8]), rest[8 : 8+n]})
		rest = rest[12+n:]
	}
	return chunks, nil
}

// pngText returns the text of the PNG's uncompressed iTXt chunk with
// the keyword key.
func pngText(png []byte, key string) (string, error) {
	chunks, err := pngChunks(png)
	if err != nil {
		return "", err
	}
	for _, c := range chunks {
		if c.typ != "iTXt" {
			continue
		}
		// keyword NUL, compression flag and method, language NUL,
		// translated keyword NUL, text.
		k, rest, ok := bytes.Cut(c.data, []byte{0})
		if !ok || string(k) != key || len(rest) < 2 || rest[0] != 0 {
			continue
		}
		parts := bytes.SplitN(rest[2:], []byte{0}, 3)
		if len(parts) == 3 {
			return string(parts[2]), nil
		}
	}
	return "", errors.New("no " + key + " text in it")
}

// withPNGText returns png with an uncompressed iTXt chunk (UTF-8 text)
// holding text under key, before the image's end.
func withPNGText(png []byte, key, text string) ([]byte, error) {
	chunks, err := pngChunks(png)
	if err != nil {
		return nil, err
	}
	if len(chunks) == 0 || chunks[len(chunks)-1].typ != "IEND" {
		return nil, errors.New("no IEND chunk at the end")
	}
	data := append(append([]byte(key), 0, 0, 0, 0, 0), text...)
	end := len(chunks) - 1
	return rebuildPNG(append(chunks[:end:end], pngChunk{"iTXt", data}, chunks[end])), nil
}

// TestPNGText: the text written into a PNG reads back, the image's
// chunks kept in order, and Go's image decoder still reads the file.
func TestPNGText(t *testing.T) {
	png, err := os.ReadFile(screenshotPNG)
	if err != nil {
		t.Fatal(err)
	}
	stripped := png
	if chunks, err := pngChunks(png); err == nil {
		// Start from the image without a header text of its own.
		var kept []pngChunk
		for _, c := range chunks {
			if c.typ != "iTXt" {
				kept = append(kept, c)
			}
		}
		stripped = rebuildPNG(kept)
	}
	const text = `{"modules":"cursor, claude → ünïcode"}`
	out, err := withPNGText(stripped, screenshotKey, text)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := pngText(out, screenshotKey); err != nil || got != text {
		t.Fatalf("read back %q, %v; want %q", got, err, text)
	}
	if _, err := pngText(stripped, screenshotKey); err == nil {
		t.Error("a PNG without the text says it has it")
	}
	if _, err := imgpng.Decode(bytes.NewReader(out)); err != nil {
		t.Errorf("the PNG with the text does not decode: %v", err)
	}
}

// rebuildPNG writes chunks as a PNG file, each with its length and CRC.
func rebuildPNG(chunks []pngChunk) []byte {
	var out bytes.Buffer
	out.Write(pngSignature)
	for _, c := range chunks {
		var n [4]byte
		binary.BigEndian.PutUint32(n[:], uint32(len(c.data)))
		out.Write(n[:])
		body := append([]byte(c.typ), c.data...)
		out.Write(body)
		binary.BigEndian.PutUint32(n[:], crc32.ChecksumIEEE(body))
		out.Write(n[:])
	}
	return out.Bytes()
}

package routetest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/acp-normalize/acp-normalize/internal/rawjson"
	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/route"

	"golang.org/x/tools/txtar"
)

// The differential checks: JSON that a parser reads the same
// must be treated the same. A session of frames is routed through a
// Router with a module, then again with every frame spelled otherwise,
// and what each side receives must be the same JSON values with the same
// ops, in the same order: the same snapshots, the same verdicts.
//
// A fuzz target's input is a session as Lines writes it and a uint64
// whose low bits pick the changes (the rest seed the choices).

// Re-encoding changes, the low bits of how.
const (
	// Blanks puts white space between tokens.
	Blanks = 1 << iota
	// EscapeKeys writes characters of object keys as escapes.
	EscapeKeys
	// EscapeValues writes characters of string values as escapes.
	EscapeValues
	// Reorder shuffles the members of every object.
	Reorder
	// AllChanges is every change at once.
	AllChanges = Blanks | EscapeKeys | EscapeValues | Reorder
)

// Lines writes records as a fuzz target's session input: one frame per
// line, after 'c' for the client's and 'a' for the agent's.
func Lines(recs []pipe.Record) []byte {
	var b bytes.Buffer
	for _, rec := range recs {
		if rec.Frame == nil || bytes.IndexByte(rec.Frame, '\n') >= 0 {
			continue
		}
		if rec.From == pipe.Client {
			b.WriteByte('c')
		} else {
			b.WriteByte('a')
		}
		b.Write(rec.Frame)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// ParseLines reads a session Lines wrote; a line's first byte is 'c' for
// the client, anything else for the agent; empty lines are skipped.
func ParseLines(data []byte) []pipe.Record {
	var recs []pipe.Record
	for _, line := range bytes.Split(data, []byte("\n")) {
		if len(line) < 2 {
			continue
		}
		from := pipe.Agent
		if line[0] == 'c' {
			from = pipe.Client
		}
		recs = append(recs, pipe.Record{From: from, Frame: line[1:]})
	}
	return recs
}

// MaxSeed is the size of the largest session AddSeeds makes a seed: a
// larger one stalls the fuzzer (CheckCapturesDifferential checks every
// recording once instead).
const MaxSeed = 16 << 10

// seedHows are the re-encodings every seed session is tried with: every
// change at once, and the escapes alone (what most often differs); the
// fuzzer tries the others.
var seedHows = []uint64{AllChanges, EscapeKeys | EscapeValues | 1<<8}

// FuzzDifferential is the body of a module's Fuzz<Vendor>Differential
// target: seeds from the package's golden cases and the small recordings
// in dir (the vendor's captures folder, "" for none), each input checked
// by checkReencoded and checkDuplicateKeys, as CheckCapturesDifferential
// checks every recording.
func FuzzDifferential(f *testing.F, dir string, mods ...rewrite.Module) {
	AddSeeds(f, dir, MaxSeed, seedHows...)
	f.Fuzz(func(t *testing.T, session []byte, how uint64) {
		recs := ParseLines(session)
		checkReencoded(t, recs, how, math.MaxInt, mods)
		checkDuplicateKeys(t, recs, how, math.MaxInt, mods)
	})
}

// AddSeeds adds to f, as sessions with each of hows, every session of
// Sessions(f, dir) that is at most maxBytes long.
func AddSeeds(f *testing.F, dir string, maxBytes int, hows ...uint64) {
	f.Helper()
	for _, s := range Sessions(f, dir) {
		if len(s) > maxBytes {
			continue
		}
		for _, how := range hows {
			f.Add(s, how)
		}
	}
}

// Sessions returns, each as Lines writes it, the input of every golden
// case of the package (testdata/golden/*.txtar) and every capture in dir
// ("" for none; the replays beside them left out).
func Sessions(t testing.TB, dir string) [][]byte {
	t.Helper()
	var sessions [][]byte
	goldens, _ := filepath.Glob(filepath.Join("testdata", "golden", "*.txtar"))
	for _, path := range goldens {
		a, err := txtar.ParseFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, file := range a.Files {
			if file.Name == "input.jsonl" {
				sessions = append(sessions, Lines(ReadRecords(t, file.Data)))
			}
		}
	}
	if dir == "" {
		return sessions
	}
	captures, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	for _, path := range captures {
		if strings.HasSuffix(path, ".replay.jsonl") {
			continue
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		sessions = append(sessions, Lines(ReadRecords(t, data)))
	}
	return sessions
}

// maxRespelled is the largest frame of a recording CheckCapturesDifferential
// spells otherwise: a larger one is kept as recorded (each Qwen recording
// holds a 560 KB command list no module reads, which would cost more than
// the rest of the session under the race detector).
const maxRespelled = 64 << 10

// CheckCapturesDifferential runs checkReencoded (every change at once)
// and checkDuplicateKeys on every capture in dir, a vendor's captures
// folder (the replays beside them left out; frames over 64 KiB kept as
// recorded):
// the real recordings, too large to be fuzz seeds, are checked once each.
func CheckCapturesDifferential(t *testing.T, dir string, mods ...rewrite.Module) {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	n := 0
	for _, path := range paths {
		if strings.HasSuffix(path, ".replay.jsonl") {
			continue
		}
		n++
		t.Run(strings.TrimSuffix(filepath.Base(path), ".jsonl"), func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			recs := ReadRecords(t, data)
			checkReencoded(t, recs, AllChanges|uint64(n)<<8, maxRespelled, mods)
			checkDuplicateKeys(t, recs, uint64(n)<<8, maxRespelled, mods)
		})
	}
	if n == 0 {
		t.Fatalf("no captures in %s", dir)
	}
}

// checkReencoded routes recs through a Router with mods, then recs with
// every frame that is valid JSON re-encoded as how says (Blanks,
// EscapeKeys, EscapeValues, Reorder; duplicate keys reduced to the last,
// as a parser reads them; frames over maxFrame bytes kept as they are),
// and fails unless both sides receive the same JSON values with the same
// ops in the same order.
func checkReencoded(t testing.TB, recs []pipe.Record, how uint64, maxFrame int, mods []rewrite.Module) {
	t.Helper()
	rng := rand.New(rand.NewPCG(how, how>>32))
	compareChanged(t, "re-encoded", recs, maxFrame, mods, func(frame []byte) []byte {
		v, err := parseTree(frame)
		if err != nil {
			return frame
		}
		return (&encoder{how: how, rng: rng}).encode(nil, v)
	})
}

// checkDuplicateKeys routes recs through a Router with mods, then recs
// with decoys: members spliced in before some members of every object of
// a valid frame up to maxFrame bytes, with the same key (the same
// spelling, or an escaped one) and another value (a plain one, or a value
// the session holds elsewhere). A parser reads the last of duplicate
// keys, so both sides must receive the same JSON values with the same ops
// in the same order (a Codex module that acted on every
// duplicate made 60,000 updates out of one frame).
func checkDuplicateKeys(t testing.TB, recs []pipe.Record, how uint64, maxFrame int, mods []rewrite.Module) {
	t.Helper()
	rng := rand.New(rand.NewPCG(how, how>>32))
	vals := decoyValues(recs, maxFrame)
	compareChanged(t, "with duplicate keys", recs, maxFrame, mods, func(frame []byte) []byte {
		return addDecoys(nil, frame, vals, rng)
	})
}

// compareChanged routes recs, and recs with change applied to every valid
// JSON frame up to maxFrame bytes, and compares what each side receives.
func compareChanged(t testing.TB, what string, recs []pipe.Record, maxFrame int, mods []rewrite.Module, change func([]byte) []byte) {
	t.Helper()
	changed := make([]pipe.Record, len(recs))
	for i, rec := range recs {
		changed[i] = rec
		if len(rec.Frame) <= maxFrame && pipe.Check(rec.Frame) == nil {
			changed[i].Frame = change(rec.Frame)
		}
	}
	compareRoutes(t, what, recs, changed, mods)
}

// compareRoutes routes both sessions and compares what each side receives.
func compareRoutes(t testing.TB, what string, recs, changed []pipe.Record, mods []rewrite.Module) {
	t.Helper()
	want := RouteConfig(t, recs, route.RouterConfig{Modules: mods, IDToken: "t"})
	got := RouteConfig(t, changed, route.RouterConfig{Modules: mods, IDToken: "t"})
	for i := 0; i < max(len(want), len(got)); i++ {
		if i >= len(want) || i >= len(got) {
			t.Fatalf("%d outputs, %d for the same frames %s; first extra:\n%s", len(want), len(got), what, extra(want, got, i))
		}
		w, g := want[i], got[i]
		if w.To != g.To || w.Op != g.Op || !sameJSON(w.Frame, g.Frame) {
			t.Fatalf("output %d differs for the same frames %s:\n in  %s\n out %s %q %s\n in' %s\n out' %s %q %s",
				i+1, what, w.In.Frame, w.To, w.Op, w.Frame, g.In.Frame, g.To, g.Op, g.Frame)
		}
	}
}

func extra(want, got []Output, i int) []byte {
	if i < len(want) {
		return want[i].Frame
	}
	return got[i].Frame
}

// sameJSON reports whether a and b are the same JSON value (numbers
// compared as written), or the same bytes when either is not JSON.
func sameJSON(a, b []byte) bool {
	va, errA := decodeValue(a)
	vb, errB := decodeValue(b)
	if errA != nil || errB != nil {
		return bytes.Equal(a, b)
	}
	return reflect.DeepEqual(va, vb)
}

func decodeValue(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("more than one value")
	}
	return v, nil
}

// node is a JSON value as written, members in order, duplicates kept.
type node struct {
	kind byte // '{', '[', '"' (a string), '0' (a number), 'l' (true, false, null)
	text string
	keys []string
	vals []*node
}

// parseTree reads one JSON value with its members in order.
func parseTree(b []byte) (*node, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	n, err := parseNode(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("more than one value")
	}
	return n, nil
}

func parseNode(dec *json.Decoder) (*node, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch v := tok.(type) {
	case json.Delim:
		n := &node{kind: byte(v)}
		for dec.More() {
			if v == '{' {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				n.keys = append(n.keys, k.(string))
			}
			val, err := parseNode(dec)
			if err != nil {
				return nil, err
			}
			n.vals = append(n.vals, val)
		}
		if _, err := dec.Token(); err != nil { // the closing delimiter
			return nil, err
		}
		return n, nil
	case string:
		return &node{kind: '"', text: v}, nil
	case json.Number:
		return &node{kind: '0', text: string(v)}, nil
	case bool:
		return &node{kind: 'l', text: fmt.Sprint(v)}, nil
	case nil:
		return &node{kind: 'l', text: "null"}, nil
	}
	return nil, fmt.Errorf("unexpected token %v", tok)
}

// encoder writes a node in another spelling.
type encoder struct {
	how uint64
	rng *rand.Rand
}

var blanks = []string{"", " ", "\t", "  ", " \t "}

func (e *encoder) blank(dst []byte) []byte {
	if e.how&Blanks == 0 {
		return dst
	}
	return append(dst, blanks[e.rng.IntN(len(blanks))]...)
}

func (e *encoder) encode(dst []byte, n *node) []byte {
	dst = e.blank(dst)
	switch n.kind {
	case '{':
		keys, vals := lastOfEach(n.keys, n.vals)
		order := make([]int, len(keys))
		for i := range order {
			order[i] = i
		}
		if e.how&Reorder != 0 {
			e.rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		}
		dst = append(dst, '{')
		for j, i := range order {
			if j > 0 {
				dst = append(e.blank(dst), ',')
			}
			dst = e.blank(dst)
			dst = e.str(dst, keys[i], e.how&EscapeKeys != 0)
			dst = append(e.blank(dst), ':')
			dst = e.encode(dst, vals[i])
		}
		dst = append(e.blank(dst), '}')
	case '[':
		dst = append(dst, '[')
		for i, v := range n.vals {
			if i > 0 {
				dst = append(e.blank(dst), ',')
			}
			dst = e.encode(dst, v)
		}
		dst = append(e.blank(dst), ']')
	case '"':
		dst = e.str(dst, n.text, e.how&EscapeValues != 0)
	default:
		dst = append(dst, n.text...)
	}
	return e.blank(dst)
}

// lastOfEach keeps, of members with the same key, the last one (as a
// parser reads them), at its place.
func lastOfEach(keys []string, vals []*node) ([]string, []*node) {
	var ks []string
	var vs []*node
	for i, k := range keys {
		if !slices.Contains(keys[i+1:], k) {
			ks, vs = append(ks, k), append(vs, vals[i])
		}
	}
	return ks, vs
}

// str writes s as a JSON string; with escape, about one character in three
// becomes an escape (\uXXXX in either case, a surrogate pair past the BMP,
// "\/" for a slash).
func (e *encoder) str(dst []byte, s string, escape bool) []byte {
	dst = append(dst, '"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			dst = append(dst, '\\', byte(r))
		case r < 0x20 || escape && e.rng.IntN(3) == 0:
			if r == '/' && e.rng.IntN(2) == 0 {
				dst = append(dst, '\\', '/')
				break
			}
			dst = e.unicodeEscape(dst, r)
		default:
			dst = utf8.AppendRune(dst, r)
		}
	}
	return append(dst, '"')
}

func (e *encoder) unicodeEscape(dst []byte, r rune) []byte {
	digits := "0123456789abcdef"
	if e.rng.IntN(2) == 0 {
		digits = "0123456789ABCDEF"
	}
	one := func(dst []byte, u rune) []byte {
		return append(dst, '\\', 'u', digits[u>>12&15], digits[u>>8&15], digits[u>>4&15], digits[u&15])
	}
	if r > 0xFFFF {
		hi, lo := utf16.EncodeRune(r)
		return one(one(dst, hi), lo)
	}
	return one(dst, r)
}

// decoys are values a decoy member may get besides the session's own:
// plain ones, and ones a module could take for a tool call, a status or
// a snapshot.
var decoys = []string{
	`null`, `7`, `"x"`, `{}`, `[]`, `true`, `"tool_call"`, `"tool_call_update"`, `"agent"`, `"task"`,
	`"completed"`, `"running"`, `"session/update"`, `{"status":"completed","message":"decoy"}`,
	`{"acp-normalize":{"subagent":{"vendor":"decoy"}}}`,
}

// decoyValues returns decoys and the short member values of the frames
// of recs up to maxFrame bytes: a decoy that is another member's value (a
// launch's tool name, a status, a session id) is what could mislead a
// module.
func decoyValues(recs []pipe.Record, maxFrame int) [][]byte {
	var vals [][]byte
	for _, d := range decoys {
		vals = append(vals, []byte(d))
	}
	var walk func(v []byte)
	walk = func(v []byte) {
		switch rawjson.FirstByte(v) {
		case '{':
			_ = rawjson.Members(v, func(m rawjson.Member) bool {
				if len(m.Value) <= 128 && len(vals) < 4096 {
					vals = append(vals, m.Value)
				}
				walk(m.Value)
				return true
			})
		case '[':
			_ = rawjson.Elements(v, func(e []byte) bool { walk(e); return true })
		}
	}
	for _, rec := range recs {
		if len(rec.Frame) <= maxFrame && pipe.Check(rec.Frame) == nil {
			walk(rec.Frame)
		}
	}
	return vals
}

// addDecoys appends v (valid JSON) with decoys spliced into its objects:
// before about one member in three, a member with the same key, spelled
// as it is or with its first character escaped, and one of vals. Every
// other byte is kept.
func addDecoys(dst, v []byte, vals [][]byte, rng *rand.Rand) []byte {
	i := rawjson.SkipSpace(v, 0)
	switch rawjson.FirstByte(v) {
	case '{':
		it, err := rawjson.NewObjectIter(v)
		if err != nil {
			return append(dst, v...)
		}
		at := 0
		for {
			m, ok := it.Next()
			if !ok {
				break
			}
			dst = append(dst, v[at:m.KeyStart]...)
			if rng.IntN(3) == 0 {
				dst = appendKey(dst, m.Key, rng)
				dst = append(dst, ':')
				dst = append(dst, vals[rng.IntN(len(vals))]...)
				dst = append(dst, ',')
			}
			dst = append(dst, v[m.KeyStart:m.ValueStart]...)
			dst = addDecoys(dst, m.Value, vals, rng)
			at = m.ValueEnd
		}
		return append(dst, v[at:]...)
	case '[':
		at, j := 0, rawjson.SkipSpace(v, i+1)
		for j < len(v) && v[j] != ']' {
			end, err := rawjson.SkipValue(v, j)
			if err != nil {
				return append(dst, v[at:]...)
			}
			dst = append(dst, v[at:j]...)
			dst = addDecoys(dst, v[j:end], vals, rng)
			at = end
			j = rawjson.SkipSpace(v, end)
			if j < len(v) && v[j] == ',' {
				j = rawjson.SkipSpace(v, j+1)
			}
		}
		return append(dst, v[at:]...)
	}
	return append(dst, v...)
}

// appendKey appends the quoted raw key, or half the time the same key with
// its first character escaped when it is plain ASCII.
func appendKey(dst, raw []byte, rng *rand.Rand) []byte {
	dst = append(dst, '"')
	if len(raw) > 0 && raw[0] >= 0x20 && raw[0] < 0x7f && raw[0] != '\\' && raw[0] != '"' && rng.IntN(2) == 0 {
		dst = fmt.Appendf(dst, `\u%04x`, raw[0])
		raw = raw[1:]
	}
	dst = append(dst, raw...)
	return append(dst, '"')
}

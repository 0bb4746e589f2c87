package trigger

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/acp-normalize/acp-normalize/rewrite"
)

func triggerModules(triggers ...[]string) []rewrite.Module {
	var mods []rewrite.Module
	for i, t := range triggers {
		mods = append(mods, rewrite.Module{Name: string(rune('a' + i)), Doc: "d", Triggers: t, New: func(rewrite.Env) rewrite.Rewriter { return nil }})
	}
	return mods
}

// matchCase is a frame and the set of modules (bit i: module i) whose
// triggers it must match.
type matchCase struct {
	name  string
	frame string
	want  uint64
}

// checkMatch runs each case through x.Match as its own subtest.
func checkMatch(t *testing.T, x *Index, tests []matchCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := x.Match([]byte(tt.frame)); got != tt.want {
				t.Fatalf("Match = %b, want %b", got, tt.want)
			}
		})
	}
}

// checkMatchMemo runs the steps in order through one memo: MatchMemo and
// Match must both give each step's want.
func checkMatchMemo(t *testing.T, x *Index, steps []matchCase) {
	t.Helper()
	var m Memo
	for _, s := range steps {
		if got, plain := x.MatchMemo([]byte(s.frame), &m), x.Match([]byte(s.frame)); got != s.want || plain != s.want {
			t.Fatalf("%s: MatchMemo = %b, Match = %b, want %b", s.name, got, plain, s.want)
		}
	}
}

func TestTriggerIndex(t *testing.T) {
	mods := triggerModules(
		[]string{`"cursor/`, `"tool_call"`, `"session/prompt"`, `"error"`},
		[]string{`"claudeCode"`, `"session/close"`},
		[]string{`plain`, `"x`},
	)
	x := New(mods)
	checkMatch(t, x, []matchCase{
		{"chunk triggers nothing", `{"method":"session/update","params":{"update":{"sessionUpdate":"agent_message_chunk","content":{"text":"see .cursor/rules and \"tool_call\" and \"claudeCode\""}}}}`, 0},
		{"method", `{"id":0,"method":"cursor/task"}`, 0b001},
		{"value", `{"update":{"sessionUpdate":"tool_call"}}`, 0b001},
		{"prefix only is no match", `{"update":{"sessionUpdate":"tool_call_update"}}`, 0},
		{"two modules", `{"method":"session/close","error":1}`, 0b011},
		{"claude", `{"_meta":{"claudeCode":{}}}`, 0b010},
		{"plain and short", `{"plain":"xy"}`, 0b100},
		{"quote at the end", `{"a":"`, 0},
		{"empty", ``, 0},
		// Other spellings of the same JSON.
		{"escaped value", `{"update":{"sessionUpdate":"tool\u005fcall"}}`, 0b001},
		{"escaped first character", `{"update":{"sessionUpdate":"\u0074ool_call"}}`, 0b001},
		{"escaped second character", `{"m":"s\u0065ssion/close"}`, 0b010},
		{"escaped slash of a prefix", `{"method":"cursor\/task"}`, 0b001},
		{"escaped key", `{"_meta":{"claude\u0043ode":{}}}`, 0b010},
		{"upper-case hex", `{"_meta":{"claudeC\u006Fde":{}}}`, 0b010},
		{"escape past the trigger is no match", `{"update":{"sessionUpdate":"tool_call\u005f"}}`, 0},
		{"escaped look-alike in text", `{"text":"\"tool\u005fcall\""}`, 0},
		{"non-ASCII escape", `{"update":{"sessionUpdate":"tool\u015fcall"}}`, 0},
	})
}

// FuzzTriggerIndex checks the index against a bytes.Contains per trigger
// and, for other spellings of a quoted trigger, a regular expression that
// allows blanks between its tokens and any character escaped, at a quote
// no backslash precedes (spelledTrigger).
func FuzzTriggerIndex(f *testing.F) {
	for _, s := range []string{
		`{"method":"cursor/task","params":{"x":"\"error\""}}`,
		`{"method":"cursor\/task","params":{"x":"\"err\u006fr\""}}`,
		`{"toolCallId" : "invoke\u005Fagent__1","agentInfo"` + "\t:{}}",
		`{"\u0074ool_call":1,"\"":"x"}`,
	} {
		f.Add([]byte(s))
	}
	mods := triggerModules(
		[]string{`"cursor/`, `"_cursor/`, `"tool_call"`, `"tool_call_update"`, `"_toolName"`, `"initialize"`, `"session/prompt"`, `"error"`},
		[]string{`"claudeCode"`, `"session/close"`, `"agentInfo":`},
		[]string{`ab`, `"q`, `"`, `"toolCallId":"invoke_agent__`},
	)
	x := New(mods)
	f.Fuzz(func(t *testing.T, frame []byte) {
		var want uint64
		for i, m := range mods {
			if containsTrigger(m, frame) {
				want |= 1 << i
			}
		}
		if got := x.Match(frame); got != want {
			t.Fatalf("Match(%q) = %b, bytes.Contains says %b", frame, got, want)
		}
	})
}

func BenchmarkTriggerIndex(b *testing.B) {
	frame := []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"chunk 1 of the answer, with \"quotes\" and <tags> & more text to make it realistic"}}}}`)
	mods := triggerModules(
		[]string{`"cursor/`, `"_cursor/`, `"tool_call"`, `"tool_call_update"`, `"_toolName"`, `"initialize"`, `"session/prompt"`, `"session/load"`, `"session/cancel"`, `"session/close"`, `"stopReason"`, `"error"`, `"subagent_spawned"`, `"subagent_state_update"`},
		[]string{`"claudeCode"`, `"session/close"`},
	)
	x := New(mods)
	b.Run("index", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			x.Match(frame)
		}
	})
	b.Run("contains", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			for _, m := range mods {
				containsTrigger(m, frame)
			}
		}
	})
}

// containsTrigger reports whether frame contains one of m's triggers, the
// slow way the index must agree with: its bytes, or for a quoted trigger
// another spelling at a quote no backslash precedes.
func containsTrigger(m rewrite.Module, frame []byte) bool {
	for _, t := range m.Triggers {
		if bytes.Contains(frame, []byte(t)) {
			return true
		}
		if re := spelledTrigger(t); re != nil && matchesAtQuote(re, frame) {
			return true
		}
	}
	return false
}

// matchesAtQuote reports whether re matches at a quote of frame that no
// backslash precedes.
func matchesAtQuote(re *regexp.Regexp, frame []byte) bool {
	for i := range frame {
		if frame[i] == '"' && (i == 0 || frame[i-1] != '\\') && re.Match(frame[i:]) {
			return true
		}
	}
	return false
}

// spelledTrigger returns a regular expression anchored at a quote that
// matches every spelling of a quoted trigger a JSON parser reads the same
// (blanks between tokens; each character of a string raw, as a \u00XX
// escape in either case, or "/" as "\/"), or nil for a trigger that is
// not such JSON text. It is the reference the index is checked against.
func spelledTrigger(t string) *regexp.Regexp {
	if len(t) < 3 || t[0] != '"' || strings.Contains(t, `\`) {
		return nil
	}
	var b strings.Builder
	b.WriteString(`^`)
	inString := false
	for i := 0; i < len(t); i++ {
		c := t[i]
		switch {
		case c == '"':
			if !inString && i > 0 {
				b.WriteString(`[ \t\n\r]*`)
			}
			b.WriteString(`"`)
			inString = !inString
		case inString:
			alts := []string{regexp.QuoteMeta(string(c)), fmt.Sprintf(`\\u00(?i:%02x)`, c)}
			if c == '/' {
				alts = append(alts, `\\/`)
			}
			b.WriteString(`(?:` + strings.Join(alts, `|`) + `)`)
		case strings.IndexByte(":,{}[]", c) >= 0:
			b.WriteString(`[ \t\n\r]*` + regexp.QuoteMeta(string(c)))
		default:
			return nil
		}
	}
	return regexp.MustCompile(b.String())
}

// TestTriggerIndexUnknownMethods pins the trigger of
// Module.UnknownMethods (rule V7): standard and '_' methods never trigger,
// whatever else the frame holds.
func TestTriggerIndexUnknownMethods(t *testing.T) {
	mods := triggerModules([]string{`"tool_call"`}, nil)
	mods[1].UnknownMethods = true
	x := New(mods)
	checkMatch(t, x, []matchCase{
		{"session/update skips", `{"jsonrpc":"2.0","method":"session/update","params":{"update":{"sessionUpdate":"agent_message_chunk"}}}`, 0},
		{"tool call: only its module", `{"method":"session/update","params":{"update":{"sessionUpdate":"tool_call"}}}`, 0b01},
		{"vendor request", `{"jsonrpc":"2.0","id":1,"method":"craft/drainMidTurnQueue","params":{}}`, 0b10},
		{"vendor notification with spaces", `{"jsonrpc": "2.0", "method" : "qwen/notify/session/mode-update"}`, 0b10},
		{"underscore method", `{"id":2,"method":"_qwencode/start_turn"}`, 0},
		{"escaped method is the module's to decode", `{"method":"session\/update"}`, 0b10},
		{"nested method key", `{"method":"session/update","params":{"rawInput":{"method":"GET"}}}`, 0b10},
		{"method as a value", `{"method":"session/update","params":{"name":"method"}}`, 0},
		{"method in text", `{"method":"session/update","params":{"text":"\"method\":\"x\""}}`, 0},
		{"method not a string", `{"method":7}`, 0},
		{"unterminated", `{"method":"craft`, 0},
		{"response", `{"id":1,"result":{}}`, 0},
	})
}

// FuzzTriggerIndexUnknownMethods checks the trigger of
// Module.UnknownMethods against a regular expression: the module matches
// when some "method" key holds a string that is neither standard nor
// '_'-prefixed (an escape makes it unknown: the module decodes it).
func FuzzTriggerIndexUnknownMethods(f *testing.F) {
	for _, s := range []string{
		`{"method":"session/update","params":{"rawInput":{"method":"GET"}}}`,
		`{"method" : "craft/x"}`,
		`{"method":"_a","x":"\"method\":\"b\""}`,
		`{"method":"session\/update"}`,
	} {
		f.Add([]byte(s))
	}
	mods := triggerModules(nil)
	mods[0].UnknownMethods = true
	x := New(mods)
	re := regexp.MustCompile(`^"method"[ \t\n\r]*:[ \t\n\r]*"([^"]*)"`)
	// The key in another spelling, at a quote no backslash
	// precedes.
	spelled := regexp.MustCompile(strings.TrimPrefix(spelledTrigger(`"method"`).String(), "^"))
	spelledRe := regexp.MustCompile(`^(?:` + spelled.String() + `)[ \t\n\r]*:[ \t\n\r]*"([^"]*)"`)
	std := rewrite.NewMethodFilter()
	f.Add([]byte(`{"m\u0065thod":"craft/x"}`))
	f.Fuzz(func(t *testing.T, frame []byte) {
		want := uint64(0)
		for i := range frame { // at every quote, as the index looks
			m := re.FindSubmatch(frame[i:])
			if m == nil && frame[i] == '"' && (i == 0 || frame[i-1] != '\\') {
				m = spelledRe.FindSubmatch(frame[i:])
			}
			if m != nil && (bytes.IndexByte(m[1], '\\') >= 0 || std.Unknown(string(m[1]))) {
				want = 1
			}
		}
		if got := x.Match(frame); got != want {
			t.Fatalf("Match(%q) = %b, the expression says %b", frame, got, want)
		}
	})
}

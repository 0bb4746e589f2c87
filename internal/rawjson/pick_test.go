package rawjson

import "testing"

func TestPick(t *testing.T) {
	keys := []string{"sessionUpdate", "toolCallId", "content", "dup", "escape", "absent"}
	tests := []struct {
		name    string
		obj     string
		want    []string // "" for nil
		wantErr bool
	}{
		{"each key once", `{"sessionUpdate":"tool_call","toolCallId":"t1","content":[{"x":"a\"}"}]}`,
			[]string{`"tool_call"`, `"t1"`, `[{"x":"a\"}"}]`, "", "", ""}, false},
		{"last duplicate wins", `{"dup":1,"dup":[2]}`, []string{"", "", "", `[2]`, "", ""}, false},
		{"escaped key", `{"esc\u0061pe":true}`, []string{"", "", "", "", "true", ""}, false},
		{"blanks", " { \"toolCallId\" : \"t\" ,\n\"content\":null } ", []string{"", `"t"`, "null", "", "", ""}, false},
		{"empty object", `{}`, []string{"", "", "", "", "", ""}, false},
		{"malformed after a match", `{"toolCallId":"t",}`, []string{"", "", "", "", "", ""}, true},
		{"no object", `["toolCallId"]`, []string{"", "", "", "", "", ""}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vals := make([][]byte, len(keys))
			vals[5] = []byte("stale") // cleared by Pick
			err := Pick([]byte(tt.obj), keys, vals)
			if (err != nil) != tt.wantErr {
				t.Fatalf("Pick error = %v, want error %v", err, tt.wantErr)
			}
			for i, k := range keys {
				if got := string(vals[i]); got != tt.want[i] || (tt.want[i] == "") != (vals[i] == nil) {
					t.Errorf("%s = %q, want %q", k, got, tt.want[i])
				}
			}
		})
	}
}

// FuzzPickMatchesLookup: Pick finds, for every key, what Lookup finds.
func FuzzPickMatchesLookup(f *testing.F) {
	for _, s := range []string{
		`{"a":1,"b":"x","c":{"a":2}}`, `{"a":1,"a":2}`, `{"\u0061":[1]}`, `{"a":1,}`, `[]`, `{`,
		`{"b":"a\"b","c":null}`,
	} {
		f.Add([]byte(s))
	}
	keys := []string{"a", "b", "c"}
	f.Fuzz(func(t *testing.T, obj []byte) {
		vals := make([][]byte, len(keys))
		err := Pick(obj, keys, vals)
		for i, k := range keys {
			want, ok := Lookup(obj, k)
			if ok != (vals[i] != nil) || string(want) != string(vals[i]) {
				t.Fatalf("Pick(%q)[%s] = %q (err %v), Lookup = %q, %v", obj, k, vals[i], err, want, ok)
			}
		}
	})
}

func BenchmarkPick(b *testing.B) {
	big := make([]byte, 0, 1<<20)
	big = append(big, `{"sessionUpdate":"tool_call_update","toolCallId":"t1","content":[{"type":"text","text":"`...)
	for len(big) < 1<<20 {
		big = append(big, `say \"hi\" `...)
	}
	big = append(big, `"}],"status":"completed"}`...)
	keys := []string{"sessionUpdate", "toolCallId", "content", "status"}
	vals := make([][]byte, len(keys))
	b.SetBytes(int64(len(big)))
	b.ReportAllocs()
	for b.Loop() {
		if err := Pick(big, keys, vals); err != nil {
			b.Fatal(err)
		}
	}
}

func TestPickIn(t *testing.T) {
	keys, innerKeys := []string{"sessionId", "update"}, []string{"sessionUpdate", "content"}
	tests := []struct {
		name    string
		obj     string
		want    []string // vals then innerVals; "" for nil
		wantErr bool
	}{
		{"params of a tool call", `{"sessionId":"s","update":{"sessionUpdate":"tool_call","content":[{"t":"a\"}"}]}}`,
			[]string{`"s"`, `{"sessionUpdate":"tool_call","content":[{"t":"a\"}"}]}`, `"tool_call"`, `[{"t":"a\"}"}]`}, false},
		{"update after other members", ` { "x" : [1,{"update":{}}] , "update" : { "content" : null } } `,
			[]string{"", `{ "content" : null }`, "", "null"}, false},
		{"last update wins", `{"update":{"sessionUpdate":"a"},"update":{"content":1}}`,
			[]string{"", `{"content":1}`, "", "1"}, false},
		{"update no object", `{"update":{"sessionUpdate":"a"},"update":"x"}`, []string{"", `"x"`, "", ""}, false},
		{"malformed update", `{"sessionId":"s","update":{"content" 1}}`, []string{"", "", "", ""}, true},
		{"malformed after update", `{"update":{"content":1},}`, []string{"", "", "", ""}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vals, inner := make([][]byte, 2), make([][]byte, 2)
			err := PickIn([]byte(tt.obj), keys, vals, "update", innerKeys, inner)
			if (err != nil) != tt.wantErr {
				t.Fatalf("PickIn error = %v, want error %v", err, tt.wantErr)
			}
			for i, got := range append(vals, inner...) {
				if string(got) != tt.want[i] || (got == nil) != (tt.want[i] == "") {
					t.Errorf("value %d = %q, want %q", i, got, tt.want[i])
				}
			}
		})
	}
}

// FuzzPickIn: PickIn finds what Pick over the object and then Pick over
// its inner member find; it fails only where one of those walks fails.
func FuzzPickIn(f *testing.F) {
	for _, s := range []string{
		`{"a":1,"u":{"a":2,"b":"x"}}`, `{"u":{"a":1},"u":{"b":2}}`, `{"u":{"a" 1}}`, `{"u":[1],"a":{}}`,
		`{"\u0075":{"b":{"u":1}}}`, `{"u":{"a":1},"u":2}`, `{"u":{"a":1}`,
	} {
		f.Add([]byte(s))
	}
	keys, innerKeys := []string{"a", "u"}, []string{"a", "b"}
	f.Fuzz(func(t *testing.T, obj []byte) {
		vals, inner := make([][]byte, 2), make([][]byte, 2)
		err := PickIn(obj, keys, vals, "u", innerKeys, inner)
		wantVals, wantInner := make([][]byte, 2), make([][]byte, 2)
		outerErr := Pick(obj, keys, wantVals)
		var innerErr error
		if outerErr == nil {
			// Every member named u that is an object is walked.
			_ = Members(obj, func(m Member) bool {
				if m.KeyIs("u") && FirstByte(m.Value) == '{' {
					if e := Pick(m.Value, innerKeys, make([][]byte, 2)); e != nil {
						innerErr = e
					}
				}
				return true
			})
			if FirstByte(wantVals[1]) == '{' {
				_ = Pick(wantVals[1], innerKeys, wantInner)
			}
		}
		if (err != nil) != (outerErr != nil || innerErr != nil) {
			t.Fatalf("PickIn(%q) error %v; Pick: %v, inner: %v", obj, err, outerErr, innerErr)
		}
		if err != nil {
			wantVals, wantInner = make([][]byte, 2), make([][]byte, 2)
		}
		for i, got := range append(vals, inner...) {
			want := append(wantVals, wantInner...)[i]
			if string(got) != string(want) || (got == nil) != (want == nil) {
				t.Fatalf("PickIn(%q) value %d = %q, want %q", obj, i, got, want)
			}
		}
	})
}

// BenchmarkPickIn: a session/update's params with a 1 MB content read
// with Pick twice (params, then update) and with PickIn (one walk).
func BenchmarkPickIn(b *testing.B) {
	params := []byte(`{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"completed","content":[{"type":"text","text":"`)
	for len(params) < 1<<20 {
		params = append(params, `say \"hi\" `...)
	}
	params = append(params, `"}]}}`...)
	keys, innerKeys := []string{"sessionId", "update"}, []string{"sessionUpdate", "toolCallId", "content", "status"}
	vals, inner := make([][]byte, len(keys)), make([][]byte, len(innerKeys))
	b.Run("Pick twice", func(b *testing.B) {
		b.SetBytes(int64(len(params)))
		for b.Loop() {
			if Pick(params, keys, vals) != nil || Pick(vals[1], innerKeys, inner) != nil {
				b.Fatal("malformed")
			}
		}
	})
	b.Run("PickIn", func(b *testing.B) {
		b.SetBytes(int64(len(params)))
		for b.Loop() {
			if PickIn(params, keys, vals, "update", innerKeys, inner) != nil {
				b.Fatal("malformed")
			}
		}
	})
}

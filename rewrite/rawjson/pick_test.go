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

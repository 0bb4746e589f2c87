package cursor

import (
	"strings"
	"testing"
)

func TestSubagentLabel(t *testing.T) {
	tests := []struct {
		name, raw, want string
	}{
		{"builtin", `{"unspecified":{}}`, "unspecified"},
		{"task wrapped builtin", `{"custom":{"unspecified":{}}}`, "unspecified"},
		{"custom agent", `{"custom":{"name":"issue118-reader"}}`, "issue118-reader"},
		{"task wrapped custom agent", `{"custom":{"custom":{"name":"issue118-reader"}}}`, "issue118-reader"},
		{"explore", `{"explore":{}}`, "explore"},
		{"string", `"shell"`, "shell"},
		{"custom string", `{"custom":"vm_setup_helper"}`, "vm_setup_helper"},
		{"two keys", `{"a":{},"b":{}}`, ""},
		{"empty", `{}`, ""},
		{"empty custom", `{"custom":{}}`, ""},
		{"name not a string", `{"custom":{"name":3}}`, ""},
		{"escaped key", `{"\u0065xplore":{}}`, "explore"},
		// Duplicate keys are one key, the last value counting.
		{"duplicate key", `{"\u0075nspecified":true,"unspecified":{}}`, "unspecified"},
		{"duplicate custom, the last counts", `{"custom":{"a":1,"b":2},"custom":{"unspecified":{}}}`, "unspecified"},
		{"deep", strings.Repeat(`{"custom":`, 40) + `{"x":{}}` + strings.Repeat(`}`, 40), ""},
		{"number", `42`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := subagentLabel([]byte(tt.raw)); got != tt.want {
				t.Errorf("subagentLabel(%s) = %q, want %q", tt.raw, got, tt.want)
			}
		})
	}
}

func TestMergeTodos(t *testing.T) {
	tests := []struct {
		name          string
		list, changed []string
		want          string
	}{
		{"update by id keeps other fields", []string{`{"id":"1","content":"a","status":"pending"}`}, []string{`{"id":"1","status":"completed"}`},
			`[{"id":"1","content":"a","status":"completed"}]`},
		{"new id appended", []string{`{"id":"1","content":"a","status":"pending"}`}, []string{`{"id":"2","content":"b","status":"pending"}`},
			`[{"id":"1","content":"a","status":"pending"},{"id":"2","content":"b","status":"pending"}]`},
		{"no id appended", nil, []string{`{"content":"x"}`}, `[{"content":"x"}]`},
		{"numeric id", []string{`{"id":1,"content":"a","status":"pending"}`, `{"id":2,"content":"b","status":"pending"}`}, []string{`{"id":2,"status":"completed"}`},
			`[{"id":1,"content":"a","status":"pending"},{"id":2,"content":"b","status":"completed"}]`},
		{"object id compacted", []string{`{"id":{"n": 1},"content":"a","status":"pending"}`}, []string{`{"id":{"n":1},"status":"completed"}`},
			`[{"id":{"n":1},"content":"a","status":"completed"}]`},
		{"escaped string id", []string{`{"id":"t1","content":"a","status":"pending"}`}, []string{`{"id":"\u00741","status":"completed"}`},
			`[{"id":"\u00741","content":"a","status":"completed"}]`},
		{"number and string ids differ", []string{`{"id":1,"content":"a","status":"pending"}`}, []string{`{"id":"1","content":"b","status":"pending"}`},
			`[{"id":1,"content":"a","status":"pending"},{"id":"1","content":"b","status":"pending"}]`},
		{"null id appended", []string{`{"id":null,"content":"a","status":"pending"}`}, []string{`{"id":null,"content":"b","status":"pending"}`},
			`[{"id":null,"content":"a","status":"pending"},{"id":null,"content":"b","status":"pending"}]`},
		{"vendor fields kept", []string{`{"id":"1","content":"a","status":"pending","extra":[1]}`}, []string{`{"id":"1","status":"in_progress","more":true}`},
			`[{"id":"1","content":"a","status":"in_progress","extra":[1],"more":true}]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := string(rawArray(mergeTodos(raws(tt.list), raws(tt.changed))))
			if got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}

func raws(ss []string) [][]byte {
	var out [][]byte
	for _, s := range ss {
		out = append(out, []byte(s))
	}
	return out
}

func TestSniffImage(t *testing.T) {
	tests := map[string]string{
		"iVBORw0KGgoAAAANSUhEUg":       "image/png",
		"/9j/4AAQSkZJRg":               "image/jpeg",
		"R0lGODlhAQABAIAAAP":           "image/gif",
		"UklGRiQAAABXRUJQVlA4IBgAAAA=": "image/webp",
		"UklGRiQAAABXQVZFZm10IA==":     "", // RIFF WAVE audio
		"UklGRiQAAAB":                  "", // RIFF, too short to tell
		"UklGRiQAAABXRU==":             "", // padded early: 10 bytes only
		"AAAA":                         "",
		"":                             "",
	}
	for data, want := range tests {
		if got := sniffImage(data); got != want {
			t.Errorf("sniffImage(%q) = %q, want %q", data, got, want)
		}
	}
}

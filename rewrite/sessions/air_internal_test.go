package sessions

import "testing"

// TestJ1ReadAir pins how the client's AIR declaration is read (J1), as
// the Claude and Codex adapters read it: AIR when version is an integer
// of at least 1; native child sessions when capabilities is an array
// holding the exact name.
func TestJ1ReadAir(t *testing.T) {
	tests := []struct {
		name, caps string
		want       airMode
	}{
		{"native", `{"_meta":{"jetbrains":{"air":{"version":1,"capabilities":["nativeSubagentSessions"]}}}}`, airNative},
		{"native among others", `{"_meta":{"jetbrains":{"air":{"version":2,"capabilities":["diffPatch","nativeSubagentSessions"]}}}}`, airNative},
		{"name spelled with an escape", `{"_meta":{"jetbrains":{"air":{"version":1,"capabilities":["native\u0053ubagentSessions"]}}}}`, airNative},
		{"version 1.0 is the integer 1", `{"_meta":{"jetbrains":{"air":{"version":1.0,"capabilities":["nativeSubagentSessions"]}}}}`, airNative},
		{"without the capability", `{"_meta":{"jetbrains":{"air":{"version":1,"capabilities":["diffPatch"]}}}}`, airMarker},
		{"capabilities not an array", `{"_meta":{"jetbrains":{"air":{"version":1,"capabilities":"nativeSubagentSessions"}}}}`, airMarker},
		{"no capabilities", `{"_meta":{"jetbrains":{"air":{"version":1}}}}`, airMarker},
		{"another case", `{"_meta":{"jetbrains":{"air":{"version":1,"capabilities":["nativesubagentsessions"]}}}}`, airMarker},
		{"a name inside a longer one", `{"_meta":{"jetbrains":{"air":{"version":1,"capabilities":["nativeSubagentSessionsV2"]}}}}`, airMarker},
		{"version 0", `{"_meta":{"jetbrains":{"air":{"version":0,"capabilities":["nativeSubagentSessions"]}}}}`, airNone},
		{"version 1.5", `{"_meta":{"jetbrains":{"air":{"version":1.5,"capabilities":["nativeSubagentSessions"]}}}}`, airNone},
		{"version a string", `{"_meta":{"jetbrains":{"air":{"version":"1","capabilities":["nativeSubagentSessions"]}}}}`, airNone},
		{"no version", `{"_meta":{"jetbrains":{"air":{"capabilities":["nativeSubagentSessions"]}}}}`, airNone},
		{"air not an object", `{"_meta":{"jetbrains":{"air":true}}}`, airNone},
		{"no air", `{"_meta":{"jetbrains":{}}}`, airNone},
		{"nothing", `{}`, airNone},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := readAir([]byte(tt.caps)); got != tt.want {
				t.Errorf("readAir(%s) = %d, want %d", tt.caps, got, tt.want)
			}
		})
	}
}

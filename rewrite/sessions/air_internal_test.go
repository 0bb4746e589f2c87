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
		// As JSON.parse and Number.isInteger read it (the adapters are
		// JavaScript): the last of duplicate members, any spelling of
		// an integer, nothing past a float's range.
		{"version 1e0", `{"_meta":{"jetbrains":{"air":{"version":1e0,"capabilities":["nativeSubagentSessions"]}}}}`, airNative},
		{"version 1E2", `{"_meta":{"jetbrains":{"air":{"version":1E2,"capabilities":["nativeSubagentSessions"]}}}}`, airNative},
		{"version 10.0e-1", `{"_meta":{"jetbrains":{"air":{"version":10.0e-1,"capabilities":["nativeSubagentSessions"]}}}}`, airNative},
		{"version past an int64", `{"_meta":{"jetbrains":{"air":{"version":123456789012345678901234567890,"capabilities":["nativeSubagentSessions"]}}}}`, airNative},
		{"version past a float", `{"_meta":{"jetbrains":{"air":{"version":1e400,"capabilities":["nativeSubagentSessions"]}}}}`, airNone},
		{"version -1", `{"_meta":{"jetbrains":{"air":{"version":-1,"capabilities":["nativeSubagentSessions"]}}}}`, airNone},
		{"version 0.9999", `{"_meta":{"jetbrains":{"air":{"version":0.9999,"capabilities":["nativeSubagentSessions"]}}}}`, airNone},
		{"version null", `{"_meta":{"jetbrains":{"air":{"version":null,"capabilities":["nativeSubagentSessions"]}}}}`, airNone},
		{"version true", `{"_meta":{"jetbrains":{"air":{"version":true,"capabilities":["nativeSubagentSessions"]}}}}`, airNone},
		{"version an array", `{"_meta":{"jetbrains":{"air":{"version":[1],"capabilities":["nativeSubagentSessions"]}}}}`, airNone},
		{"the name twice", `{"_meta":{"jetbrains":{"air":{"version":1,"capabilities":["nativeSubagentSessions","nativeSubagentSessions"]}}}}`, airNative},
		{"other types before the name", `{"_meta":{"jetbrains":{"air":{"version":1,"capabilities":[1,null,true,{"nativeSubagentSessions":true},"nativeSubagentSessions"]}}}}`, airNative},
		{"the name only nested", `{"_meta":{"jetbrains":{"air":{"version":1,"capabilities":[["nativeSubagentSessions"],{"name":"nativeSubagentSessions"}]}}}}`, airMarker},
		{"the name with a blank", `{"_meta":{"jetbrains":{"air":{"version":1,"capabilities":["nativeSubagentSessions "]}}}}`, airMarker},
		{"capabilities null", `{"_meta":{"jetbrains":{"air":{"version":1,"capabilities":null}}}}`, airMarker},
		{"air twice, the last without it", `{"_meta":{"jetbrains":{"air":{"version":1,"capabilities":["nativeSubagentSessions"]},"air":{"version":1}}}}`, airMarker},
		{"air twice, the last with it", `{"_meta":{"jetbrains":{"air":{"version":0},"air":{"version":1,"capabilities":["nativeSubagentSessions"]}}}}`, airNative},
		{"version twice, the last 0", `{"_meta":{"jetbrains":{"air":{"version":1,"capabilities":["nativeSubagentSessions"],"version":0}}}}`, airNone},
		{"spaced", `{ "_meta" : { "jetbrains" : { "air" : { "version" : 1 , "capabilities" : [ "nativeSubagentSessions" ] } } } }`, airNative},
		{"_meta null", `{"_meta":null}`, airNone},
		{"jetbrains a string", `{"_meta":{"jetbrains":"air"}}`, airNone},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := readAir([]byte(tt.caps)); got != tt.want {
				t.Errorf("readAir(%s) = %d, want %d", tt.caps, got, tt.want)
			}
		})
	}
}

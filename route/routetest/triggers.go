package routetest

import (
	"testing"

	"github.com/acp-normalize/acp-normalize/rewrite"
	"github.com/acp-normalize/acp-normalize/route/trigger"
)

// TriggerCase is a frame and whether it must reach a module.
type TriggerCase struct {
	Name, Frame string
	Want        bool
}

// CheckTriggers checks, case by case, that a frame reaches m exactly when
// the case wants it to (P1 hot path: a frame no trigger matches is never
// decoded).
func CheckTriggers(t *testing.T, m rewrite.Module, cases []TriggerCase) {
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			if got := Triggered(m, []byte(tc.Frame)); got != tc.Want {
				t.Errorf("triggered %v, want %v", got, tc.Want)
			}
		})
	}
}

// Triggered reports whether frame reaches m: whether the proxy's trigger
// index matches one of m's triggers in it.
func Triggered(m rewrite.Module, frame []byte) bool {
	return trigger.New([]rewrite.Module{m}).Match(frame) != 0
}

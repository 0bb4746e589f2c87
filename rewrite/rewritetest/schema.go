package rewritetest

import (
	"sync"
	"testing"

	"github.com/acp-normalize/acp-normalize/internal/acpschema"
)

// Schema checks frames a module writes to the client against the official
// ACP v1 schema (rule P3), embedded in the repository (internal/acpschema):
// the stable schema of the TypeScript SDK 2.4.0, and its unstable schema
// only for the shapes only it has (subagent_update, session_message). A
// request or notification must use a method the schema gives the client,
// and its params must match that method's type; a response must match
// the agent's responses. Session link content blocks, standard but newer
// than the files, are checked by hand (acpschema).
type Schema struct {
	s *acpschema.Schema
}

// LoadSchema returns the v1 schema; a schema that cannot be loaded fails
// the test (the files are part of the repository).
func LoadSchema(t testing.TB) *Schema {
	t.Helper()
	s, err := loadSchema()
	if err != nil {
		t.Fatal(err)
	}
	return &Schema{s: s}
}

// loadSchema loads the schema once per test binary: a load compiles the
// definitions anew as they are used (a third of a second under the race
// detector for a golden case), and an acpschema.Schema is safe for
// concurrent use. Set once, never changed.
var loadSchema = sync.OnceValues(func() (*acpschema.Schema, error) { return acpschema.Load(1) })

// Check reports, as a test error, a client-bound frame that the schema
// rejects.
func (s *Schema) Check(t testing.TB, frame []byte) {
	t.Helper()
	if err := s.Validate(frame); err != nil {
		msg := err.Error()
		if len(msg) > 2000 {
			msg = msg[:2000] + " ..."
		}
		t.Errorf("P3: frame to the client does not match the ACP schema: %s\nframe: %s", msg, frame)
	}
}

// CheckOutput checks a frame a module wrote to the client: op is the
// router's operation ("replace", "emit", "request", ...) and in the frame
// it answers. A replaced frame is checked only when the vendor's own frame
// passes (a module must not make a conforming frame fail; a vendor frame
// that already fails is the vendor's deviation, P5).
func (s *Schema) CheckOutput(t testing.TB, op string, in, out []byte) {
	t.Helper()
	if op == "replace" && s.Validate(in) != nil {
		return
	}
	s.Check(t, out)
}

// Validate checks one client-bound frame.
func (s *Schema) Validate(frame []byte) error {
	return s.s.Validate(acpschema.FromAgent, "", frame)
}

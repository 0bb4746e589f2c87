package rewritetest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/acp-normalize/acp-normalize/pipe"
	"github.com/acp-normalize/acp-normalize/rewrite/rawjson"
)

// Schema files, relative to the repository's parent folder (the shared
// folder sits next to the repository; see ../shared/acp-schema/SOURCE.md).
const (
	stableSchema   = "shared/acp-schema/npm-sdk-2.4.0/v1/schema.json"
	unstableSchema = "shared/acp-schema/npm-sdk-2.4.0/v1/schema.unstable.json"
)

// Schema checks frames a module writes to the client against the official
// ACP v1 schema (rule P3): the stable schema of the TypeScript SDK 2.4.0,
// and its unstable schema only for the subagent-session shapes
// (subagent_update and session_message updates) and elicitation/create.
// A request or notification must use a method the schema gives the
// client (x-side "client"), and its params must match that method's type;
// a response must match the agent's responses.
//
// Known exception: the S1 session link content block {"type":"session",
// "sessionId":...} postdates the 2.4.0 schema; such blocks are removed
// from a frame before it is checked (docs/contributing.md says so too).
type Schema struct {
	stable, unstable schemaFile
}

// schemaFile is one schema file, its client methods and compiled types.
type schemaFile struct {
	path     string
	compiler *jsonschema.Compiler
	methods  map[string]string // method -> $defs name of its params
	compiled map[string]*jsonschema.Schema
}

// LoadSchema reads the schemas; it skips the test, saying why, when
// ../shared is not there (a clone without the project's shared folder).
func LoadSchema(t testing.TB) *Schema {
	t.Helper()
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	parent := filepath.Dir(root)
	if _, err := os.Stat(filepath.Join(parent, stableSchema)); err != nil {
		t.Skipf("ACP schema check skipped: %s not found next to the repository", stableSchema)
	}
	s := &Schema{}
	for _, x := range []struct {
		dst  *schemaFile
		file string
	}{{&s.stable, stableSchema}, {&s.unstable, unstableSchema}} {
		f, err := loadSchemaFile(filepath.Join(parent, x.file))
		if err != nil {
			t.Fatal(err)
		}
		*x.dst = f
	}
	return s
}

func loadSchemaFile(path string) (schemaFile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return schemaFile{}, err
	}
	var doc struct {
		Defs map[string]struct {
			Side   string `json:"x-side"`
			Method string `json:"x-method"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return schemaFile{}, fmt.Errorf("%s: %w", path, err)
	}
	f := schemaFile{path: path, compiler: jsonschema.NewCompiler(),
		methods: map[string]string{}, compiled: map[string]*jsonschema.Schema{}}
	for name, d := range doc.Defs {
		isCall := strings.HasSuffix(name, "Request") || strings.HasSuffix(name, "Notification")
		if d.Side == "client" && d.Method != "" && isCall {
			f.methods[d.Method] = name
		}
	}
	return f, nil
}

func (f *schemaFile) def(name string) (*jsonschema.Schema, error) {
	if s, ok := f.compiled[name]; ok {
		return s, nil
	}
	s, err := f.compiler.Compile(f.path + "#/$defs/" + name)
	if err != nil {
		return nil, fmt.Errorf("compiling %s of %s: %w", name, f.path, err)
	}
	f.compiled[name] = s
	return s, nil
}

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
	f := &s.stable
	if unstableShape(frame) {
		f = &s.unstable
	}
	env := pipe.Peek(frame)
	if v, _ := rawjson.LookupString(frame, "jsonrpc"); v != "2.0" {
		return errors.New(`jsonrpc is not "2.0"`)
	}
	var part []byte
	var def string
	switch env.Kind {
	case pipe.Request, pipe.Notification:
		name, ok := f.methods[string(env.Method)]
		if !ok {
			return fmt.Errorf("%s is not a method the ACP schema gives the client", env.Method)
		}
		part, _ = rawjson.Lookup(frame, "params")
		def = name
	case pipe.Response:
		part, def = frame, "AgentResponse"
	default:
		return fmt.Errorf("a %s frame", env.Kind)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(part))
	if err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	sch, err := f.def(def)
	if err != nil {
		return err
	}
	return sch.Validate(withoutSessionLinks(doc))
}

// unstableShape reports whether frame has a shape only the unstable
// schema knows.
func unstableShape(frame []byte) bool {
	env := pipe.Peek(frame)
	if env.MethodIs("elicitation/create") {
		return true
	}
	tag, _ := rawjson.LookupString(frame, "params", "update", "sessionUpdate")
	return tag == "subagent_update" || tag == "session_message"
}

// withoutSessionLinks removes S1 session link blocks from every array.
func withoutSessionLinks(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = withoutSessionLinks(e)
		}
	case []any:
		out := x[:0]
		for _, e := range x {
			if m, ok := e.(map[string]any); ok && m["type"] == "session" {
				if _, ok := m["sessionId"]; ok {
					continue
				}
			}
			out = append(out, withoutSessionLinks(e))
		}
		return out
	}
	return v
}

// repoRoot returns the folder of go.mod above the working directory.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = up
	}
}

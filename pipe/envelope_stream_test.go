package pipe

import (
	"bytes"
	"testing"
)

// streamPeek feeds frame to a StreamEnvelope in pieces cut at cuts.
func streamPeek(frame []byte, cuts ...int) *StreamEnvelope {
	var s StreamEnvelope
	prev := 0
	for _, c := range cuts {
		c = min(max(c, prev), len(frame))
		s.Write(frame[prev:c])
		prev = c
	}
	s.Write(frame[prev:])
	return &s
}

// checkStreamPeek: fed in pieces cut anywhere, a StreamEnvelope finds
// what Peek finds in the whole frame.
func checkStreamPeek(t *testing.T, frame []byte, cuts ...int) {
	t.Helper()
	env := Peek(frame)
	s := streamPeek(frame, cuts...)
	switch env.Kind {
	case Request, Notification, Response:
	case Batch, NotJSON:
		if s.Kind() != env.Kind {
			t.Fatalf("%q cut at %v: kind %v, want %v", frame, cuts, s.Kind(), env.Kind)
		}
		return
	default:
		return // invalid: no promise
	}
	if s.TooLong {
		return
	}
	got := s.Envelope()
	if got.Kind != env.Kind || !bytes.Equal(got.ID, env.ID) || !bytes.Equal(got.Method, env.Method) || got.Error != env.Error {
		t.Fatalf("%q cut at %v: got %v id %q method %q error %v, want %v id %q method %q error %v",
			frame, cuts, got.Kind, got.ID, got.Method, got.Error, env.Kind, env.ID, env.Method, env.Error)
	}
}

func TestStreamEnvelope(t *testing.T) {
	frames := []string{
		`{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"text":"a \"b\" \\"}}`,
		`{"jsonrpc":"2.0","params":{"text":"x\\\\","id":9,"method":"no"},"method":"fs/read","id":"r\"1"}`,
		`{"jsonrpc":"2.0","result":{"content":"` + string(bytes.Repeat([]byte(`ab\"\\`), 50)) + `"},"id":7}`,
		`{"jsonrpc":"2.0","error":{"code":1,"message":"m"},"id":[1,{"a":2}]}`,
		` { "m\u0065thod" : "session\/update" , "params" : [ 1 , "}" ] } `,
		`{"method":"a","method":"b"}`,
		`[{"jsonrpc":"2.0","id":1,"method":"x"}]`,
		`hello`,
	}
	for _, f := range frames {
		for cut := range len(f) + 1 {
			checkStreamPeek(t, []byte(f), cut)
			checkStreamPeek(t, []byte(f), cut, cut+1, cut+3)
		}
	}
}

func FuzzStreamEnvelope(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"t":"\\\""}}`), uint16(10), uint16(30))
	f.Add([]byte(`{"result":{"a":"}"},"id":"\u0031"}`), uint16(3), uint16(4))
	f.Fuzz(func(t *testing.T, frame []byte, a, b uint16) {
		checkStreamPeek(t, frame, int(a), int(b))
	})
}

package pipe

import (
	"github.com/acp-normalize/acp-normalize/internal/rawjson"
)

// The wire code (envelope peek, redaction) walks JSON with the scanner of
// package rawjson, the one set of raw-JSON helpers; these are its names
// here.

func isSpace(c byte) bool                            { return rawjson.IsSpace(c) }
func skipSpace(b []byte, i int) int                  { return rawjson.SkipSpace(b, i) }
func scanString(b []byte, i int) (int, error)        { return rawjson.ScanString(b, i) }
func skipValue(b []byte, i int) (int, error)         { return rawjson.SkipValue(b, i) }
func keyEqual(raw []byte, name string) bool          { return rawjson.KeyEqual(raw, name) }
func syntaxError(b []byte, i int, what string) error { return rawjson.SyntaxError(b, i, what) }

// FirstByte returns the first non-blank byte of frame, or 0.
func FirstByte(frame []byte) byte { return rawjson.FirstByte(frame) }

// Package rawjson is the one set of raw-JSON helpers of acp-normalize:
// walking an object's members or an array's elements without decoding
// them (Members, Elements, Lookup), decoding one string or key
// (DecodeString, UnescapeKey, LookupString), encoding a string the way
// encoding/json does without HTML escaping (AppendString, Text, Marshal),
// and splicing a member into or out of an object while keeping every
// other byte (Set, Delete).
//
// Frames are relayed byte for byte (rule P1), so nothing here re-encodes
// what it does not change. It is the lowest floor: it imports nothing of
// the project, package pipe uses the scanner for the wire (envelope peek,
// redaction) and the vendor modules use the rest.
package rawjson

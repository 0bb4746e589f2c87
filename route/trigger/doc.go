// Package trigger finds which modules a frame concerns without decoding
// it: one pass over the frame's bytes for every module's triggers
// (rewrite.Module.Triggers), in each spelling a JSON parser reads the same.
//
// The entry points are New, which builds an Index of a module list (Add
// adds the router's own and the watched triggers), and Index.Match; a
// stream of frames uses Index.MatchMemo with one Memo per direction, which
// skips the envelope a frame shares with the last untriggered one.
// index.go builds the index and holds the scan for the compact spelling;
// spelled.go the check for other spellings (escapes, blanks between
// tokens), reached only at quotes that differ from a trigger at an escape
// or blank; memo.go the memo.
package trigger

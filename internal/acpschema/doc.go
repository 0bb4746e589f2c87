// Package acpschema embeds the official ACP JSON schema files (v1 and v2,
// stable and unstable, unmodified: SOURCE.md) and checks frames against
// them. The tests of every module use it (rule P3), and so does the
// binary (`acp-normalize check`), so a clone checks the same as CI with
// no folder beside the repository.
//
// A frame is checked against the stable file, and against the unstable
// one only when it has a shape only that file has (an unstable method or
// sessionUpdate kind, derived from the two files). The session link
// content block, standard since 2026-11-20 but newer than the files, is
// checked by hand.
package acpschema

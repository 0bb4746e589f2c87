// Package acpschema embeds the official ACP JSON schema files (v1 and v2,
// stable and unstable, unmodified: SOURCE.md) and checks frames against
// them. The tests of every module use it (rule P3), and so does the
// binary (`acp-normalize check`), so a clone checks the same as CI with
// no folder beside the repository.
//
// A frame is checked against the stable file, and against the unstable
// one only when it has a shape only that file has (an unstable method or
// sessionUpdate kind, derived from the two files). What the files cannot
// say is checked by hand first: the message's own members (no root field
// beyond JSON-RPC's, a result or an error), no member twice in an object
// (the schema sees only the last one, a client may read the first), and
// the session link content block, standard since 2026-11-20 but newer
// than the files, which may stand only in a tool call's content.
//
// A violation names the place that is wrong and what it may be: the
// values of an enum, the kinds a discriminator may have.
package acpschema

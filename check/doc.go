// Package check validates a replayed capture (route.Replay's steps) the
// way `acp-normalize check` reports it: every frame each side sent and
// every frame the proxy wrote against the official ACP schema of the
// connection's protocol version (internal/acpschema), ids against the
// requests they answer (pipe.IDKey, the router's own equality), methods
// against the schema's lists and the modules' vendor methods, and the
// subagent-session rules. Each finding has a Level: Repaired when the
// proxy's output no longer has it, Broken when the receiver got it;
// `--fail-on` picks the level that fails.
package check

// Package methods is the module "methods": rule V7 (and C13 for every
// agent). An agent-to-client method that is neither in the ACP schema's
// method lists (rewrite.StandardMethods, stable and unstable, and
// $/cancel_request) nor '_'-prefixed — Qwen Code's craft/drainMidTurnQueue
// request and qwen/notify/session/mode-update notification, say — never
// reaches the client: a request is answered -32601 by the proxy (some
// clients never answer an unknown request, which hangs the turn), a
// notification is dropped, and the first of each method is logged at
// warn. --forward-unknown-vendor-methods passes them through.
//
// It acts on every connection, whoever the agent is, and is listed last
// so that a vendor module can claim its own methods first (the cursor
// module answers cursor/task and applies C13 to the rest of its
// namespace, _cursor/* included, with the same rewrite.RefuseMethod).
// The decision costs a standard frame one map lookup inside the trigger
// scan (rewrite.Module.UnknownMethods): session/update frames never reach
// this module.
package methods

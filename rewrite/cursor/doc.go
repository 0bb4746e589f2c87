// Package cursor is the vendor module for Cursor's ACP agent
// (`cursor-agent acp`). It implements rules C1-C14 and the Cursor part of
// rules M and S of the contract (docs/contract.md, and the shared
// normalized-output.md it details):
//
//   - Cursor's non-standard agent-to-client requests (`cursor/task`,
//     `cursor/update_todos`, `cursor/create_plan`, `cursor/ask_question`,
//     `cursor/generate_image`, also spelled with a leading `_`) never reach
//     the client. The proxy answers them itself, in the doubly nested
//     `{"outcome":{"outcome":KIND}}` shape Cursor reads, and turns them into
//     standard ACP: tool call updates, `plan` updates,
//     `session/request_permission` and `elicitation/create` requests.
//   - Subagent launch tool calls (`rawInput._toolName` "task") carry the
//     rule-M snapshot under `_meta["acp-normalize"].subagent` on every frame,
//     whichever order the tool call and `cursor/task` arrive in.
//   - Any other `cursor/*` method gets -32601 (C13), so clients that never
//     answer unknown requests cannot hang a turn, unless the shared option
//     --forward-unknown-vendor-methods passes them on.
//   - For a client that declared clientCapabilities.subagents, the
//     sessions module (rewrite/sessions) announces each launch as a
//     standard child session from this module's snapshot (S1); with the
//     module's option NativeSubagentsOption (--cursor-native-subagents, on
//     by default) Cursor is asked for its own draft child sessions, which
//     that module translates instead (S2).
//
// Per-connection state (tool calls, early `cursor/task` requests, todo
// lists, prompts in flight, open proxy requests) lives in rewrite/table
// tables, capped in entries and bytes (rule P6), and is dropped for a
// session at `session/close`. The files: cursor.go (module, dispatch,
// state), calls.go (what is known of a tool call), snapshot.go (rule M
// data), toolcall.go (C2-C7 on tool call frames), task.go (cursor/task),
// todos.go, ask.go, requests.go (C8-C12), summary.go (the replay
// timeline's description of Cursor methods).
//
// The module sees frames from both sides: the client's `initialize` (for
// its elicitation and subagent capabilities), prompts and their responses
// (to attribute vendor methods that carry no sessionId, C14), cancels and
// closes; and the agent's tool calls and vendor methods. Message chunks
// never match its triggers, so they are never decoded.
package cursor

// Package claude is the vendor module for Claude's ACP adapter
// (claude-agent-acp), rules L1-L8 of the contract.
//
// In flat mode (a client that does not declare clientCapabilities.subagents)
// the adapter reports a subagent as an ordinary tool call named "Agent" or
// "Task" and marks every frame the subagent produces with
// _meta.claudeCode.parentToolUseId. The facts about the subagent are
// scattered over many partial frames: the input streams in over several
// tool_call_update frames that omit unchanged fields, and the outcome is
// split between a status:"completed" frame and a frame whose
// _meta.claudeCode.toolResponse holds the agent id, duration, token count
// and result (adapter 0.101.0 sends the toolResponse frame first; older
// adapters sent it second).
//
// The module keeps, per (sessionId, toolCallId) of a launch call (L1), what
// those frames said so far (L2) and puts the whole current snapshot under
// _meta["acp-normalize"].subagent of every launch-call frame it forwards
// (L3, rule M). Every frame carrying parentToolUseId gets
// _meta["acp-normalize"].parentToolCallId (L4). Changes are byte-preserving
// splices into the _meta object of the thing described (the update, or the
// toolCall of a session/request_permission): title, kind, content, rawInput
// and every other byte stay as Claude sent them (L5), and the native
// subagent-session frames subagent_update and session_message pass through
// untouched.
//
// The adapter never says a launch call is in progress: the first child
// frame of a pending call makes it running, and the module sends the
// client a tool_call_update for the launch call, with only its snapshot,
// right after that child frame (L6). A background agent's report comes
// back on a usage_update of the parent session (the adapter's hand-back,
// _meta["_claude/origin"] kind "peer"); it completes that agent's launch
// call by the same kind of update (L7). resultText is cleaned of Claude
// Code's bookkeeping tags and trailer (L8).
//
// The module's trigger is the key "claudeCode", so frames without it (the
// main agent's message chunks, most of the traffic) never reach it, plus
// "session/close", on which the state of that session is dropped, and
// "handback", the member of the hand-back's origin. State is
// bounded (rule P6): its launch calls live in a rewrite/table table,
// capped in entries (table.DefaultEntries) and in the connection's byte
// budget, the oldest dropped first.
package claude

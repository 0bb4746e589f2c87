// Package codex is the vendor module for Codex behind its ACP adapter
// (@agentclientprotocol/codex-acp, rules V1-V6 and V8 of the contract).
//
// Codex reports a subagent as a tool call titled "spawnAgent" whose
// rawInput names the sender thread and, once it completes (at once: the
// child runs on), the child thread in receiverThreadIds and agentsStates.
// Its result only arrives later, in a separate "wait" call's
// rawInput.agentsStates[<child>] (status and message); the child's own
// frames are not forwarded. The module gives every frame of a spawnAgent
// call the subagent snapshot (rule M), the title "Subagent: <prompt>",
// and, right after a frame that carries the child's final state, a
// tool_call_update of the launch call with the updated snapshot (V5).
//
// It acts only once the initialize result names Codex's adapter in
// agentInfo.name (AgentName), or when --vendor codex is given (V1).
// Standard subagent sessions (subagent_update, for a client that declared
// clientCapabilities.subagents) pass through unchanged (V8).
package codex

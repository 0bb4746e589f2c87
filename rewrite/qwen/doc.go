// Package qwen is the module "qwen" for Qwen Code (`qwen --acp`, rules
// V1-V6 and V8 of the contract), built on the kit (rewrite/launch,
// rewrite/meta, rewrite/table).
//
// It acts only on a connection whose initialize result names the agent
// "qwen-code" (or with --vendor qwen). A launch call is a tool call whose
// _meta.toolName is "agent" or "task" (V2); every frame of it carries the
// rule-M snapshot, accumulated from rawInput (description, prompt,
// subagent_type, run_in_background), the ACP status and rawOutput
// (status, executionMode, result, executionSummary). Child frames, which
// Qwen marks with _meta.parentToolCallId, and the permission requests for
// child tool calls get _meta["acp-normalize"].parentToolCallId (V4). A
// background subagent's end arrives on later message chunks as
// _meta.backgroundTask {taskId, status, toolUseId}: right after such a
// chunk the launch call gets a tool_call_update with the updated
// snapshot (V5). Qwen's non-standard methods (craft/drainMidTurnQueue,
// qwen/notify/...) are the methods module's (V7).
//
// Hot path: the triggers are quoted member names that Qwen writes only
// on tool calls, subagent frames and background results; the main
// agent's message chunks (its usage chunks included) match none.
package qwen

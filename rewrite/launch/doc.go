// Package launch is the kit's state of subagent launch calls for vendor
// modules that see a launch as one ACP tool call (rules M, V2-V6):
// per (sessionId, toolCallId) the accumulated rule-M snapshot in a capped
// table (P6), a status that only moves forward (P4, V6), the "Subagent:
// <description>" title where the vendor's title is only the tool's name
// (V3), the splice of the snapshot into each frame of the call, and the
// tool_call_update a module emits when the subagent's end arrives
// elsewhere (V5).
package launch

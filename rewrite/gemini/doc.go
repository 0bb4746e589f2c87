// Package gemini is the vendor module for Gemini CLI (gemini --acp; rules
// V1-V6 and V8 of the contract).
//
// Gemini CLI runs a subagent through its invoke_agent tool; on the wire
// that is a tool call whose toolCallId starts "invoke_agent__", titled
// "Delegating to agent '<name>'", kind "think", with no rawInput, no
// _meta and no name: the task text never reaches the client, and the
// completion carries no result. The module gives every frame of such a
// call the subagent snapshot (rule M): vendor, toolName "invoke_agent",
// the agent's name as subagentType (from the title), and the status. The
// title says more than the tool's name, so it is kept (V3). Gemini sends
// no child frames (nothing for V4) and no result elsewhere (nothing for
// V5), and it ignores clientCapabilities.subagents (V8: nothing to pass).
//
// It acts only once the initialize result names Gemini CLI in
// agentInfo.name (AgentName), or when --vendor gemini is given (V1).
package gemini

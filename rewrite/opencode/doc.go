// Package opencode is the module "opencode" for OpenCode (`opencode acp`,
// rules V1-V6 and V8 of the contract), built on the kit (rewrite/launch,
// rewrite/meta).
//
// It acts only on a connection whose initialize result names the agent
// "OpenCode" (or with --vendor opencode). OpenCode puts no _meta on its
// frames: a launch call is the tool call whose FIRST title is "task"
// (later frames are titled with the description, V2). Every frame of it
// carries the rule-M snapshot: description, prompt and subagent_type
// from rawInput, the ACP status, and from the completion the child
// session (rawOutput.metadata.sessionId -> childSessionId), the model
// that ran it (metadata.model -> resolvedModel "providerID/modelID"),
// a background launch (metadata.background, jobId -> agentId, status
// "launched") and the text inside <task_result> of a finished task
// (resultText, V5: same call, no emit needed). A bare "task" title
// becomes "Subagent: <description>" (V3). OpenCode 1.18.33 forwards no
// child frames, so there is nothing to link (V4).
package opencode

// Package mockagent serves a recorded capture as a stdio ACP agent, so that
// a real client (an editor, a test, or the proxy in front of it) can watch
// a recorded session again without the vendor's agent.
//
// Load reads a capture's input records, as replay does (our captures,
// {"from":...,"frame":...} lines and Kandev acpdbg captures), into a Script:
// the agent's recorded frames in order, each gated by the last client
// request recorded before it. Serve then answers the live client:
//
//   - Each live client request is matched to the recorded request of the
//     same method in order (the 2nd live session/prompt is the 2nd
//     recorded one) and answered with that request's recorded response,
//     its id replaced by the live request's id (every other byte kept).
//   - The agent's recorded notifications and requests (session/update,
//     session/request_permission, cursor/task, ...) are written in their
//     recorded order relative to those responses: a frame is written once
//     the live client has sent the request recorded before it. A live
//     request whose response lies further ahead writes everything up to
//     that response at once, so a client that skips a recorded request
//     never blocks the rest.
//   - Agent requests keep their recorded ids. A frame recorded after the
//     client's answer to one (say the session/prompt result after a
//     permission answer) also waits for the live answer, so it is not
//     sent before the user answers. It is released at the latest by the
//     client's next request or notification (session/cancel, say), so a
//     client that never answers is never left waiting. The answers are
//     not otherwise used: the recorded turn goes on whatever the user
//     chose.
//   - A live request with no recorded response gets an error response at
//     once, never silence: -32601 (method not found) when the capture has
//     no request of that method at all, -32603 (internal error) when its
//     recorded requests are used up or the capture ends before the agent
//     answered it.
//   - A session/load the recorded loads do not answer (none recorded, or
//     the next one is of another session) is served from the capture when
//     its agent answered initialize with agentCapabilities.loadSession:
//     true, as ACP's session/load replays a conversation: the session's
//     recorded session/update notifications, byte for byte, and a
//     user_message_chunk per content block of each recorded
//     session/prompt of it, in recorded order (a recorded load of the
//     session starts that history afresh: its agent re-sent it all), then
//     the recorded answer to a load of it, else {}. A session the capture
//     does not know (no session/new answer, prompt, load or update names
//     it) gets -32002 (resource not found) with {"sessionId"} as data, as
//     ACP answers an unknown session. So an editor that reopens a thread,
//     Zed loading a parent and then its subagents' children (rules Z1-Z3
//     of docs/contract.md), sees it without the agent. A capture without
//     the capability keeps -32601 for a load it did not record.
//   - A malformed client frame is answered as JSON-RPC 2.0 says, so a
//     client never waits on it: -32600 (invalid request) with the frame's
//     id when it can be read, else null; -32700 (parse error) for a line
//     that starts like JSON but is not. A batch (ACP sends none) gets an
//     array with a -32600 for each element that is a request or invalid,
//     or a single -32600 with a null id when it is empty or unreadable.
//     Non-JSON lines are ignored.
//   - Recorded agent stderr lines are written to stderr in their place;
//     recorded non-JSON stdout lines are skipped (stdout carries protocol
//     frames only). At the client's EOF Serve returns.
//
// Timing is driven by the client's frames only: nothing sleeps.
package mockagent

// Package driver is the capture rig's ACP client: it starts a
// real agent, talks to it over stdio as a plain editor would (initialize,
// session/new, an optional session/set_mode, one session/prompt),
// answers the agent's requests (permission asks with an allow option,
// fs/* inside the workspace, anything else -32601 unless told
// otherwise), waits for background work to go quiet, ends the agent, and
// records every line both ways byte for byte in the capture format of
// rule R1 (pipe.CaptureWriter): frames from either side, agent stderr
// lines, and start and exit events.
package driver

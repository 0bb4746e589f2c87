// Package sessions is the kit's module for Subagent Sessions, the ACP
// standard shape of subagents (rules S0-S8): one implementation for every
// vendor, working from what the vendor modules made of the stream.
//
// Every vendor module marks a subagent launch call by the rule-M snapshot
// it splices into each frame of the call (_meta["acp-normalize"].subagent)
// and a frame the subagent produced by its parentToolCallId. The sessions
// module comes after the vendor modules in the module list and reads
// those marks (the router hands it the frames the vendor modules
// replaced, and those they emitted, as they leave them). From them it
//
//   - bridges the opt-in (S0): an opted-in client's initialize reaches
//     the agent with both spellings, clientCapabilities.subagents and
//     clientCapabilities._meta.subagents;
//   - synthesizes a standard child session for each launch call of an
//     agent that gives none of its own (S1, S4), announced before the
//     call's first frame, linked from the call's content, its state
//     following the snapshot, the prompt sent as a session_message;
//   - moves the frames a vendor links to such a call onto the child (S5),
//     and answers a client request naming a synthesized child -32602;
//   - translates the draft dialect (subagent_spawned,
//     subagent_state_update) into subagent_update for an opted-in client
//     and folds it into the snapshot for the others (S2, S6);
//   - re-homes, for a client that did not opt in, an agent request on a
//     child session it was never told about onto the parent (S7);
//   - moves a pending launch call to running on the first frame linked to
//     it (S8), and keeps every later snapshot of the call from going back
//     (P4);
//   - gives Zed, which reads a key of its own rather than the standard
//     shapes, a subagent card for each launch call of a thread it reopens
//     and serves the child thread it loads (Z1-Z3), and shows a live
//     subagent's progress in its launch call's content (Z4): zed*.go.
//
// A JetBrains AIR client that declares nativeSubagentSessions gets the
// same child sessions in the draft dialect it reads; one that does not
// gets its subagent marker on every launch call (J1, air.go).
//
// Whose session is this is decided by what the client and the proxy did
// on the connection (known.go): a session the client created or named
// is never taken for a child, and a child is the proxy's when the proxy
// made it, not when its id looks like one (S5, S7).
//
// A client that did not opt in never receives a session shape (P3): the
// module drops what an agent sends of them to such a client. What the
// module needs to know of a vendor besides its snapshots is declared by
// the vendor's module (rewrite.SessionTraits), and Module is built from
// the vendor modules' list.
package sessions

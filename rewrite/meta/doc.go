// Package meta writes what the proxy adds to a frame (rule M): everything
// lives under the one key Key ("acp-normalize") of the _meta object of the
// thing it describes, merged into any _meta the vendor sent (its keys are
// kept, byte for byte).
//
// Subagent is the snapshot of a subagent launch call, the same type for
// every vendor, with the status vocabulary as constants and their one
// order (Status.Before, Final, Ended, Further; Advance, Follow and Keep
// move a status forward only, Detach makes a background completion
// launched: no module compares statuses itself); SetSubagent and
// SetParent splice it (or parentToolCallId) into a frame; Object builds the
// _meta value of a frame the proxy writes itself. Title makes the V3
// title of a launch call.
package meta

// Package timeline renders what a replay (route.Replay) produced: the
// JSONL of rule R3 (what each side would have received), a human timeline
// for a terminal (Pretty), the changes normalization made next to the
// frames that caused them (Diff), a self-contained HTML viewer of the
// session (HTML: rows, header and subagent tree built here from the same
// summaries and changes, drawn by the embedded viewer/ page). Package
// check validates the same steps against the ACP schema and the contract.
//
// It decodes frames only to describe them; the JSONL output splices every
// frame's bytes verbatim (rule P1).
package timeline

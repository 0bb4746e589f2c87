// Package timeline renders what a replay (proxy.Replay) produced: the
// JSONL of rule R3 (what each side would have received), a human timeline
// for a terminal (Pretty), and the changes normalization made next to the
// frames that caused them (Diff).
//
// It decodes frames only to describe them; the JSONL output splices every
// frame's bytes verbatim (rule P1).
package timeline

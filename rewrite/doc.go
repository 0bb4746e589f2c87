// Package rewrite is the contract between the proxy and its vendor modules,
// and the kit modules are built with: frame builders here, and
//
//   - meta: the _meta["acp-normalize"] writers and the Subagent snapshot;
//   - table: capped per-connection state (entries and bytes, rule P6);
//     NewTable makes one with the connection's caps from the Env;
//   - rewritetest: golden harness, log recorder, ACP schema check;
//   - launch: the state of subagent launch calls that are one ACP tool
//     call (snapshot, forward-only status, V3 titles, the V5 update);
//   - sessions: the module that gives every vendor's subagents standard
//     child sessions (S0-S8), from the snapshots the vendor modules
//     write; a vendor module declares what it must know of the vendor
//     besides in Module.Sessions (SessionTraits).
//
// Below it, internal/rawjson holds the raw-JSON helpers (lookup, string
// decode, splice) the wire uses too; above it, route/routetest runs
// modules through a real Router (golden cases, real recordings, trigger
// checks). Here too: StandardMethods (the ACP schema's method names,
// checked against the embedded schema, internal/acpschema),
// Module.UnknownMethods (a trigger for methods outside it, rule V7) and
// RefuseMethod (the C13/V7 answer).
//
// A Module is a value: a name, a one-line doc, the trigger byte strings that
// select the frames it wants, the options it reads, the vendor methods it
// handles, and a constructor of per-connection state. The proxy lists its
// modules explicitly in one place (cmd/acp-normalize) and checks the list
// with Validate at start-up; there is no registry. The command builds
// flags, recorded options and replay settings from the modules' Options
// (and SharedOptions); the router hands the values, with the caps of rule
// P6, to every module's New in its Env. docs/contributing.md is the
// checklist for a new module.
//
// For each connection the proxy calls Module.New once and then hands the
// Rewriter every frame, in wire order and never concurrently, that contains
// at least one of the module's triggers, or of the triggers it watches
// (Env.Watcher) (found before any decoding, in any spelling a JSON parser
// reads the same), and is valid JSON nested at most pipe.MaxDepth deep:
// the router checks that once per frame, for every module alike, and
// forwards any other frame unchanged (rule P5). The Rewriter answers with a Verdict. The zero Verdict forwards
// the frame unchanged; a Verdict can also replace the frame, drop it, send
// frames to either side (a reply to the sender, or frames emitted right
// after the frame in its own direction), and send requests to either side
// under proxy-owned ids "acp-normalize:<n>", whose responses come back to
// the Rewriter through ResponseHandler and never reach the other side.
//
// A Rewriter that returns an error (or panics) fails open (rule P5): the
// proxy forwards the original frame unchanged and logs the error with the
// frame's method, id and the rule named by a RuleError.
package rewrite

// Package routetest runs vendor modules through a real proxy Router, for
// the golden and capture tests of modules. It sits above the proxy (it
// drives route.NewRouter), so the contract layer, rewrite, and its own
// kit, rewritetest, import nothing of the router.
//
//   - Route runs capture records through a Router with some modules, as
//     the live proxy would, and Format renders what each side received
//     as replay lines (rule R3);
//   - RunGolden, the one golden harness of every module, runs the txtar
//     cases under testdata/golden/ (input.jsonl in: frames, non-JSON
//     lines, repeats, a side going away; output.jsonl compared byte for
//     byte; optional hand-written snapshots.json and parents.json) with
//     the settings and cap of the case's "options:" comment line, and
//     holds every output to the invariants all modules keep (P1, P3 with
//     the ACP schema, C12: no request answered twice); Golden does the
//     same for one module;
//   - CheckTriggers and Triggered check which frames reach a module
//     through the router's trigger index (the hot path of rule P1);
//   - CheckCapture, CheckCaptures and NothingOnOthers check whole real
//     captures (rules P1, M, V1-V5);
//   - FuzzAgentFrames and FuzzDifferential are the bodies of a module's
//     fuzz targets; Sessions gives the golden inputs and recordings as
//     sessions;
//   - Snapshots and Parents read back the rule-M additions.
package routetest

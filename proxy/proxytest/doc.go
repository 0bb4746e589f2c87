// Package proxytest runs vendor modules through a real proxy Router, for


//
//   - Route runs capture records through a Router with some modules, as
//     the live proxy would, and Format renders what each side received
//     as replay lines (rule R3);
//   - RunGolden runs txtar cases (input.jsonl in, output.jsonl compared
//     byte for byte, optional hand-written snapshots.json and
//     parents.json), checking every frame the modules wrote against the
//     ACP schema;
//   - Golden does the same for one module configured by each case's
//     "options:" comment line (Configured);
//   - CheckCapture, Captures and NothingOnOthers check whole real
//     captures (rules P1, M, V1-V5);
//   - Snapshots and Parents read back the rule-M additions.
package proxytest

// Package moduletest runs vendor modules through a real proxy Router, for
// the golden and capture tests of modules (it is rewritetest's partner:
// rewritetest cannot import the proxy, whose own tests import it).
//
//   - Route runs capture records through a Router with some modules, as
//     the live proxy would, and Format renders what each side received
//     as replay lines (rule R3);
//   - RunGolden runs txtar cases (input.jsonl in, output.jsonl compared
//     byte for byte, optional hand-written snapshots.json and
//     parents.json), checking every frame the modules wrote against the
//     ACP schema;
//   - Snapshots and Parents read back the rule-M additions.
package moduletest

// capture-client.mjs: what both interop clients (ts/drive.mjs and
// conductor/compare.mjs) do alike as the client of a recorded session:
// send the requests the capture's client sent, and answer an elicitation
// as a simple editor would. Plain ESM, no dependencies.

import { readFileSync } from "node:fs";

// clientRequests returns the requests the capture's client sent, in order.
export function clientRequests(path) {
  const out = [];
  for (const line of readFileSync(path, "utf8").split("\n")) {
    if (!line.trim()) continue;
    const rec = JSON.parse(line);
    const f = rec.frame;
    if (rec.from !== "client" || !f || typeof f !== "object" || Array.isArray(f)) continue;
    if (typeof f.method === "string" && "id" in f) out.push({ method: f.method, params: f.params ?? {} });
  }
  return out;
}

// firstChoice answers one elicitation property with its first allowed value.
export function firstChoice(prop) {
  if (!prop || typeof prop !== "object") return undefined;
  const first = (l) => (Array.isArray(l) && l.length ? l[0] : undefined);
  const opt = (o) => (o && typeof o === "object" ? o.const ?? o.value : o);
  switch (prop.type) {
    case "array": {
      const items = prop.items ?? {};
      const v = opt(first(items.anyOf)) ?? opt(first(items.oneOf)) ?? first(items.enum);
      return v === undefined ? [] : [v];
    }
    case "boolean":
      return true;
    case "number":
    case "integer":
      return prop.minimum ?? 0;
    default:
      return opt(first(prop.oneOf)) ?? opt(first(prop.anyOf)) ?? first(prop.enum) ?? prop.default ?? "";
  }
}

// same-session.mjs: compare two capture-rig recordings of the same
// scenario with a real agent, one through the stdio wrapper and one
// through the conductor with acp-normalize in its proxy slot
// (capture/qwen-pipeline.sh): the frames the client received must be the same
// once what differs between any two runs of a real agent is taken out
// (UUIDs it makes up, timestamps, durations, process ids), with the conductor's own doings (it
// renumbers agent requests; the handshake's _meta.proxy) taken out too.
//
//   node same-session.mjs STDIO.jsonl CONDUCTOR.jsonl [STDIO2 CONDUCTOR2 ...]
//
// A real agent's independent streams interleave differently from run to
// run (Qwen's available_commands_update races the prompt's first chunks),
// so frames are compared stream by stream: JSON-RPC requests and
// responses in order, and each tool call's (or subagent's) updates, and
// each other kind of update, in order; only the order between streams is
// free.
//
// Prints one line per pair and exits 1 if any pair differs.

import { readFileSync } from "node:fs";

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
const TIME = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z?/g;
// Durations and clock readings a real agent reports ("durationMs":2088).
// Process ids in a shell tool's output ("Process Group PGID: 22417").
const PID = /\b(PGID|PID|pid):? \d+/g;
const PID_MEMBER = /"(pid|pgid)":\d+/g;
const CLOCK = /"(\w*(?:[Dd]uration|[Ee]lapsed|Ms|At|[Tt]ime|[Tt]imestamp))":-?\d+(\.\d+)?/g;

function clientView(path) {
  const frames = [];
  let agentRequests = 0;
  for (const line of readFileSync(path, "utf8").split("\n")) {
    if (!line.trim()) continue;
    const rec = JSON.parse(line);
    if (rec.from !== "agent" || !rec.frame || typeof rec.frame !== "object") continue;
    const f = structuredClone(rec.frame);
    if (typeof f.method === "string" && "id" in f) f.id = `agent-request-${++agentRequests}`;
    frames.push(f);
  }
  const init = frames.find((f) => !("method" in f) && f.result?.protocolVersion !== undefined);
  if (init?.result?._meta?.proxy === true) {
    delete init.result._meta.proxy;
    if (Object.keys(init.result._meta).length === 0) delete init.result._meta;
  }
  const streams = new Map();
  for (const f of frames) {
    const key = streamOf(f);
    if (!streams.has(key)) streams.set(key, []);
    streams.get(key).push(JSON.stringify(f).replace(UUID, "<uuid>").replace(TIME, "<time>").replace(CLOCK, '"$1":"<clock>"').replace(PID, "$1 <pid>").replace(PID_MEMBER, '"$1":"<pid>"'));
  }
  return streams;
}

function streamOf(f) {
  if (f.method !== "session/update") return "rpc";
  const u = f.params?.update ?? {};
  const parent = u._meta?.["acp-normalize"]?.parentToolCallId ?? u._meta?.parentToolCallId;
  if (parent) return `subagent ${parent}`;
  if (u.toolCallId) return `tool call ${u.toolCallId}`;
  return `update ${u.sessionUpdate}`;
}

let bad = 0;
const args = process.argv.slice(2);
if (args.length === 0 || args.length % 2 !== 0) {
  process.stderr.write("usage: node same-session.mjs STDIO.jsonl CONDUCTOR.jsonl [...]\n");
  process.exit(2);
}
for (let i = 0; i < args.length; i += 2) {
  const a = clientView(args[i]);
  const b = clientView(args[i + 1]);
  let total = 0;
  let diff = null;
  for (const key of new Set([...a.keys(), ...b.keys()])) {
    const x = a.get(key) ?? [];
    const y = b.get(key) ?? [];
    total += x.length;
    for (let j = 0; j < Math.max(x.length, y.length) && !diff; j++) {
      if (x[j] !== y[j]) diff = { key, j, x: x[j] ?? "<none>", y: y[j] ?? "<none>" };
    }
  }
  if (!diff) {
    console.log(`same: ${args[i]} = ${args[i + 1]} (${total} frames to the client, ${a.size} streams)`);
    continue;
  }
  bad++;
  console.log(`DIFFERENT in stream "${diff.key}" at frame ${diff.j + 1}: ${args[i]} vs ${args[i + 1]}`);
  let k = 0;
  while (k < diff.x.length && diff.x[k] === diff.y[k]) k++;
  const from = Math.max(0, k - 200);
  console.log(`  stdio:     ...${diff.x.slice(from, k + 300)}`);
  console.log(`  conductor: ...${diff.y.slice(from, k + 300)}`);
}
process.exitCode = bad ? 1 : 0;

// compare.mjs: play recorded sessions through acp-normalize in the proxy
// slot of the real TypeScript conductor (@thinkwell/conductor), and through
// acp-normalize as a plain stdio wrapper, and print every frame the client
// received in each, as JSON, for cmd/acp-normalize/conductor_test.go to
// compare (rules K1-K3: the client sees the same normalized session).
//
//   node compare.mjs --bin ACP_NORMALIZE [--layouts one,two,...] CAPTURE...
//
// For each capture the agent is `ACP_NORMALIZE mock-agent CAPTURE`. Layouts
// (the conductor's proxy components, client side first):
//   stdio   no conductor: ACP_NORMALIZE -- ACP_NORMALIZE mock-agent CAPTURE
//   one     [acp-normalize]
//   two     [acp-normalize, acp-normalize]
//   before  [passthrough.mjs, acp-normalize]
//   after   [acp-normalize, passthrough.mjs]
//   process [node passthrough.mjs, acp-normalize]
// (passthrough.mjs, a pass-through written with the TypeScript ACP SDK, runs
// on the conductor's in-process channel in before and after, which saves a
// Node start per session; process runs it as its own stdio process, for the
// first capture of each vendor folder only.)
//
// The client plays the capture's client requests in order (the sessionId
// of the live session/new substituted) and answers agent requests as a
// simple editor would. A conductor session ends once the client has as many
// frames as the stdio run of the same capture delivered (or after a bound,
// then the test shows what is missing): closing the conductor's client
// stream ends the conductor at once, with no drain of its own.
//
// Frames are printed decoded, with the ids of agent requests replaced by
// their order ("agent-request-N"): the conductor renumbers requests on each
// hop, and that is its business. Everything else is as received.
//
// One node process runs every capture and layout; the conductor runs in it
// (it has no stdio entry point of its own), its log level at warn (its
// info lines go to stdout with console.log).

import { spawn } from "node:child_process";
import { clientRequests, firstChoice } from "../capture-client.mjs";
import { createInterface } from "node:readline";
import { Conductor, StdioConnector, createChannelPair, fromConnectors, inProcess } from "@thinkwell/conductor";
import { fileURLToPath } from "node:url";
import { channelStream, passthroughApp } from "./passthrough.mjs";

const passthroughPath = fileURLToPath(new URL("./passthrough.mjs", import.meta.url));

const usage = "usage: node compare.mjs --bin ACP_NORMALIZE [--layouts one,two,before,after] [--timeout-ms N] CAPTURE...";

function parseArgs(argv) {
  const opts = { bin: "", layouts: ["one", "two", "before", "after"], timeoutMs: 20000, captures: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--bin") opts.bin = argv[++i] ?? "";
    else if (a === "--layouts") opts.layouts = (argv[++i] ?? "").split(",").filter(Boolean);
    else if (a === "--timeout-ms") opts.timeoutMs = Number(argv[++i]);
    else if (a.startsWith("--")) throw new Error(`unknown flag ${a}; ${usage}`);
    else opts.captures.push(a);
  }
  if (!opts.bin || opts.captures.length === 0) throw new Error(usage);
  return opts;
}

// answer is what the client answers an agent request with.
function answer(msg) {
  const p = msg.params ?? {};
  switch (msg.method) {
    case "session/request_permission": {
      const allow = (p.options ?? []).find((o) => o.kind === "allow_once" || o.kind === "allow_always");
      return { result: { outcome: allow ? { outcome: "selected", optionId: allow.optionId } : { outcome: "cancelled" } } };
    }
    case "elicitation/create": {
      const content = {};
      for (const [k, prop] of Object.entries(p.requestedSchema?.properties ?? {})) content[k] = firstChoice(prop);
      return { result: { action: "accept", content } };
    }
    case "fs/read_text_file":
      return { result: { content: "" } };
    case "fs/write_text_file":
      return { result: {} };
  }
  return { error: { code: -32601, message: `method not found: ${msg.method}` } };
}

// session plays one capture over a transport {send(msg), messages (async
// iterable), end()} and returns the frames received. done(frames) says
// when the session is complete after the last response.
async function session(capture, transport, enough, timeoutMs) {
  const frames = [];
  const pending = new Map();
  let agentRequests = 0;
  let wake = () => {};
  const reader = (async () => {
    for await (const msg of transport.messages) {
      if (msg && typeof msg === "object" && typeof msg.method === "string" && "id" in msg) {
        const reply = { jsonrpc: "2.0", id: msg.id, ...answer(msg) };
        frames.push({ ...msg, id: `agent-request-${++agentRequests}` });
        transport.send(reply);
      } else {
        frames.push(msg);
        if (msg && typeof msg === "object" && "id" in msg && pending.has(msg.id)) {
          pending.get(msg.id)(msg);
          pending.delete(msg.id);
        }
      }
      wake();
    }
  })();
  let sessionId;
  let nextId = 0;
  const errors = [];
  for (const req of clientRequests(capture)) {
    const params = structuredClone(req.params);
    if (sessionId && typeof params.sessionId === "string") params.sessionId = sessionId;
    const id = ++nextId;
    const response = new Promise((resolve) => pending.set(id, resolve));
    transport.send({ jsonrpc: "2.0", id, method: req.method, params });
    const res = await Promise.race([response, reader.then(() => null), bound(timeoutMs)]);
    if (!res) {
      errors.push(`no response to ${req.method} (id ${id})`);
      break;
    }
    if (req.method === "session/new") sessionId = res.result?.sessionId;
  }
  // Wait for the frames that follow the last response.
  const deadline = bound(timeoutMs);
  while (!enough(frames)) {
    const woke = new Promise((r) => (wake = r));
    if ((await Promise.race([woke.then(() => true), reader.then(() => false), deadline.then(() => false)])) === false) break;
  }
  await transport.end();
  await Promise.race([reader, bound(timeoutMs)]);
  if (transport.conductorErrors) {
    errors.push(...transport.conductorErrors.errors);
    return { frames, errors, shutdownNoise: transport.conductorErrors.late };
  }
  return { frames, errors };
}

function bound(ms) {
  return new Promise((r) => setTimeout(() => r(null), ms).unref());
}

// stdioTransport runs acp-normalize in front of the mock agent.
function stdioTransport(bin, capture) {
  const child = spawn(bin, ["--", bin, "mock-agent", "--no-stderr", capture], { stdio: ["pipe", "pipe", "inherit"] });
  child.stdin.on("error", () => {});
  const exited = new Promise((r) => child.on("exit", r));
  const lines = createInterface({ input: child.stdout, crlfDelay: Infinity });
  return {
    send: (msg) => child.stdin.write(JSON.stringify(msg) + "\n"),
    messages: (async function* () {
      for await (const line of lines) if (line.trim()) yield JSON.parse(line);
    })(),
    // An editor's end: close the agent's stdin, read until it exits.
    end: async () => {
      child.stdin.end();
      await exited;
    },
  };
}

// conductorTransport runs the real conductor in this process, with the
// layout's proxy components and the mock agent.
function conductorTransport(bin, capture, layout) {
  const acpn = () => new StdioConnector({ command: bin, args: ["--log-level", "warn"] });
  // The SDK pass-through runs on the conductor's in-process channel.
  const pass = () =>
    inProcess(async (end) => {
      await passthroughApp().connect(channelStream(end)).closed;
    });
  const passProcess = () => new StdioConnector({ command: process.execPath, args: [passthroughPath] });
  const make = { one: [acpn], two: [acpn, acpn], before: [pass, acpn], after: [acpn, pass], process: [passProcess, acpn] }[layout];
  if (!make) throw new Error(`unknown layout ${layout}`);
  const conductor = new Conductor({
    instantiator: fromConnectors(
      new StdioConnector({ command: bin, args: ["mock-agent", "--no-stderr", capture] }),
      make.map((f) => f()),
    ),
    logging: { level: "warn", name: "conductor" },
  });
  const { left, right } = createChannelPair();
  // The conductor's event loop ends on an error (0.5.7 throws when it
  // answers a request on a connection that shutdown has closed: a late
  // agent request the proxy answered). One while the session runs is an
  // error of the run; one after the client left is shutdown noise.
  const t = { ended: false, errors: [], late: [] };
  const running = conductor
    .connect({ connect: async () => right })
    .catch((e) => (t.ended ? t.late : t.errors).push(`conductor: ${e?.message ?? e}`));
  return {
    send: (msg) => left.send(structuredClone(msg)),
    messages: left.messages,
    conductorErrors: t,
    end: async () => {
      t.ended = true;
      await left.close();
      await conductor.shutdown();
      await running;
    },
  };
}

async function pool(items, size, fn) {
  const out = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(size, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i]);
      }
    }),
  );
  return out;
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const runs = [];
  const vendorsSeen = new Set();
  const firstOfVendor = new Set();
  for (const c of opts.captures) {
    const vendor = c.split("/").slice(-2, -1)[0];
    if (!vendorsSeen.has(vendor)) firstOfVendor.add(c);
    vendorsSeen.add(vendor);
  }
  await pool(opts.captures, 2, async (capture) => {
    // The stdio run ends as an editor ends it: everything until the exit.
    const ref = await session(capture, stdioTransport(opts.bin, capture), () => true, opts.timeoutMs);
    runs.push({ capture, layout: "stdio", ...ref });
    const want = ref.frames.length;
    const layouts = firstOfVendor.has(capture) && opts.layouts.length ? [...opts.layouts, "process"] : opts.layouts;
    for (const layout of layouts) {
      const got = await session(capture, conductorTransport(opts.bin, capture, layout), (f) => f.length >= want, opts.timeoutMs);
      runs.push({ capture, layout, ...got });
    }
  });
  process.stdout.write(JSON.stringify({ runs }) + "\n");
}

main().catch((e) => {
  process.stderr.write(`compare.mjs: ${e?.stack ?? e}\n`);
  process.exitCode = 2;
});

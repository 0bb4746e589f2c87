// drive.mjs: play a recorded ACP session through an agent command with the
// official TypeScript ACP SDK (@agentclientprotocol/sdk) as the client, and
// report in JSON what the SDK accepted, what it rejected and what it silently
// dropped. Used by cmd/acp-normalize/interop_ts_test.go to pin rule P3
// (spec-only output) against a real client's schema validation.
//
//   node drive.mjs [--subagents] [--elicitation-form] --capture CAPTURE -- AGENT [ARGS...]
//
// The client requests (initialize, session/new, session/set_mode,
// session/prompt, ...) are the ones the capture's client sent, in order, with
// the same params; --subagents adds clientCapabilities.subagents = {} to
// initialize and uses the SDK's unstable entry point, whose schema knows the
// Subagent Sessions shapes; --elicitation-form adds
// clientCapabilities.elicitation.form = {}. Agent requests are answered as a simple editor
// would: session/request_permission with the first allow option,
// elicitation/create with the first choice of each property.
//
// Extension methods (a leading underscore) that reach the client unhandled
// are listed, not counted as errors: ACP lets a client ignore them.
//
// stdout: one JSON summary. Exit status 0 only when no error was recorded and
// every prompt turn ended with a stop reason.

import { spawn } from "node:child_process";
import { clientRequests, firstChoice } from "../capture-client.mjs";
import { Readable, Writable } from "node:stream";

const usage = "usage: node drive.mjs [--subagents] [--elicitation-form] --capture CAPTURE -- AGENT [ARGS...]";

function parseArgs(argv) {
  const opts = { subagents: false, elicitationForm: false, capture: "", command: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--") {
      opts.command = argv.slice(i + 1);
      break;
    } else if (a === "--subagents") {
      opts.subagents = true;
    } else if (a === "--elicitation-form") {
      opts.elicitationForm = true;
    } else if (a === "--capture") {
      opts.capture = argv[++i] ?? "";
    } else {
      throw new Error(`unknown argument ${a}; ${usage}`);
    }
  }
  if (!opts.capture || opts.command.length === 0) throw new Error(usage);
  return opts;
}

// droppedPaths lists what a schema parse lost: every value present in raw
// whose key is missing from parsed (an unknown field the schema strips, or an
// invalid value it replaced by "absent", such as an out-of-enum kind or
// status), every array the parse shortened (items skipped as invalid), and
// every primitive it changed.
function droppedPaths(raw, parsed, path = "") {
  const out = [];
  if (raw === null || raw === undefined) return out;
  if (Array.isArray(raw)) {
    if (!Array.isArray(parsed)) return [{ path, raw }];
    if (parsed.length !== raw.length) return [{ path, raw, parsedLength: parsed.length }];
    raw.forEach((v, i) => out.push(...droppedPaths(v, parsed[i], `${path}[${i}]`)));
    return out;
  }
  if (typeof raw === "object") {
    if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) return [{ path, raw }];
    for (const [k, v] of Object.entries(raw)) {
      if (v === undefined) continue;
      const p = path ? `${path}.${k}` : k;
      if (!Object.hasOwn(parsed, k) || parsed[k] === undefined) out.push({ path: p, raw: v });
      else out.push(...droppedPaths(v, parsed[k], p));
    }
    return out;
  }
  return raw === parsed ? out : [{ path, raw, parsed }];
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  // The unstable entry point is the same client with the unstable schema
  // (Subagent Sessions, subagents capability); the stable one is what an
  // editor on the stable API validates with.
  const sdkPath = opts.subagents ? "@agentclientprotocol/sdk/unstable" : "@agentclientprotocol/sdk";
  const acp = await import(sdkPath);
  // The SDK validates with these generated zod schemas but does not export
  // them; they are imported by file so that the drop check below uses
  // exactly the schema the SDK's own session/update parse uses.
  const schemaDir = new URL(
    opts.subagents
      ? "./node_modules/@agentclientprotocol/sdk/dist/v1/unstable/schema/zod.gen.js"
      : "./node_modules/@agentclientprotocol/sdk/dist/v1/schema/zod.gen.js",
    import.meta.url,
  );
  const validate = await import(schemaDir.href);

  const summary = {
    capture: opts.capture,
    sdk: sdkPath,
    subagentsDeclared: opts.subagents,
    elicitationFormDeclared: opts.elicitationForm,
    agentMeta: null,
    updates: {},
    sessions: {},
    children: {},
    subagents: {},
    plans: [],
    permissions: [],
    elicitations: [],
    requests: [],
    extensionMethods: [],
    stopReasons: [],
    dropped: [],
    errors: [],
    agentExit: null,
  };
  const errors = summary.errors;

  // The SDK reports a notification it could not parse (an unknown
  // sessionUpdate tag, a malformed known variant), a response to an unknown
  // request and an invalid message only through console.error.
  const origError = console.error.bind(console);
  console.error = (...args) => {
    errors.push({ source: "console.error", message: args.map((a) => (typeof a === "string" ? a : safeJSON(a))).join(" ") });
    origError(...args);
  };
  process.on("unhandledRejection", (e) => errors.push({ source: "unhandledRejection", message: String(e?.stack ?? e) }));

  const child = spawn(opts.command[0], opts.command.slice(1), { stdio: ["pipe", "pipe", "inherit"] });
  const exited = new Promise((resolve) => {
    child.on("exit", (code, signal) => resolve({ code, signal }));
    child.on("error", (e) => {
      errors.push({ source: "spawn", message: String(e) });
      resolve({ code: null, signal: null });
    });
  });
  child.stdin.on("error", () => {}); // the agent may be gone before our last write

  const base = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
  // Observe the messages on both sides of the SDK's parser: incoming ones to
  // check every method and every session/update against the schema the SDK
  // uses (to see what its lenient parse silently drops), outgoing ones to see
  // every error the SDK answered an agent request with (invalid params,
  // method not found).
  // The schemas the SDK parses these params and results with.
  const paramSchemas = {
    "session/update": validate.zSessionNotification,
    "session/request_permission": validate.zRequestPermissionRequest,
    "elicitation/create": validate.zCreateElicitationRequest,
    "elicitation/complete": validate.zCompleteElicitationNotification,
  };
  const resultSchemas = {
    initialize: validate.zInitializeResponse,
    "session/new": validate.zNewSessionResponse,
    "session/set_mode": validate.zSetSessionModeResponse,
    "session/prompt": validate.zPromptResponse,
  };
  const sentRequests = new Map(); // JSON id -> method of our requests
  const checkDrops = (where, schema, value) => {
    if (!schema) return;
    const r = schema.safeParse(value);
    if (!r.success) return; // the SDK's own parse reports this one
    const update = where === "session/update" ? value?.update : undefined;
    for (const d of droppedPaths(value, r.data)) {
      summary.dropped.push({ method: where, sessionUpdate: update?.sessionUpdate, toolCallId: update?.toolCallId, ...d });
    }
  };
  const knownToClient = new Set(Object.values(acp.CLIENT_METHODS));
  const extensionRequestIds = new Set(); // -32601 is the right answer to these

  const inspect = new TransformStream({
    transform(msg, controller) {
      if (msg && typeof msg === "object" && typeof msg.method === "string") {
        if (msg.method.startsWith("_") && "id" in msg) extensionRequestIds.add(JSON.stringify(msg.id));
        if (!knownToClient.has(msg.method) && !msg.method.startsWith("_") && msg.method !== "$/cancel_request") {
          errors.push({ source: "method", message: `non-ACP method toward the client: ${msg.method}`, frame: msg });
        }
        checkDrops(msg.method, paramSchemas[msg.method], msg.params);
      } else if (msg && typeof msg === "object" && "id" in msg && "result" in msg) {
        const method = sentRequests.get(JSON.stringify(msg.id));
        checkDrops(`${method} result`, resultSchemas[method], msg.result);
      }
      controller.enqueue(msg);
    },
  });
  const outgoing = new WritableStream({
    async write(msg) {
      if (msg && typeof msg === "object" && typeof msg.method === "string" && "id" in msg) {
        sentRequests.set(JSON.stringify(msg.id), msg.method);
      }
      if (msg && typeof msg === "object" && "error" in msg && !("method" in msg) && !extensionRequestIds.has(JSON.stringify(msg.id))) {
        errors.push({ source: "client-error-response", message: `the SDK answered agent request ${JSON.stringify(msg.id)} with an error`, error: msg.error });
      }
      const w = base.writable.getWriter();
      try {
        await w.write(msg);
      } finally {
        w.releaseLock();
      }
    },
    async close() {
      await base.writable.close().catch(() => {});
    },
  });
  const stream = { readable: base.readable.pipeThrough(inspect), writable: outgoing };

  const app = acp
    .client({ name: "acp-normalize-interop" })
    .onNotification("session/update", ({ params }) => {
      const u = params.update;
      summary.updates[u.sessionUpdate] = (summary.updates[u.sessionUpdate] ?? 0) + 1;
      summary.sessions[params.sessionId] = (summary.sessions[params.sessionId] ?? 0) + 1;
      if (u.sessionUpdate === "subagent_update") {
        // Subagent Sessions: the child's announcement and its state, on
        // the parent session.
        const c = (summary.children[u.sessionId] ??= { parent: params.sessionId, states: [] });
        if (u.title) c.title = u.title;
        if (u.state) c.states.push(u.state.state + (u.state.stopReason ? "/" + u.state.stopReason : ""));
      }
      const snap = u._meta?.["acp-normalize"]?.subagent;
      if (snap !== undefined && typeof u.toolCallId === "string") {
        (summary.subagents[u.toolCallId] ??= []).push({ sessionUpdate: u.sessionUpdate, subagent: snap });
      }
      if (u.sessionUpdate === "plan") {
        summary.plans.push({ entries: u.entries, todos: u._meta?.["acp-normalize"]?.todos });
      }
    })
    .onRequest("session/request_permission", ({ params }) => {
      const allow = params.options.find((o) => o.kind === "allow_once" || o.kind === "allow_always");
      const outcome = allow ? { outcome: "selected", optionId: allow.optionId } : { outcome: "cancelled" };
      summary.permissions.push({
        sessionId: params.sessionId,
        toolCallId: params.toolCall.toolCallId,
        title: params.toolCall.title,
        options: params.options.map((o) => `${o.optionId}:${o.kind}`),
        answer: outcome,
      });
      return { outcome };
    })
    .onRequest("elicitation/create", ({ params }) => {
      const props = params.requestedSchema?.properties ?? {};
      const content = {};
      for (const [k, p] of Object.entries(props)) content[k] = firstChoice(p);
      summary.elicitations.push({ message: params.message, content });
      return { action: "accept", content };
    })
    // The recorded clients (Qwen, OpenCode) declare fs: the file's text
    // does not matter to the check, only that a standard request is served.
    .onRequest("fs/read_text_file", () => ({ content: "" }))
    .onRequest("fs/write_text_file", () => ({}))
    .onRequest("*", ({ method }) => {
      if (method.startsWith("_")) summary.extensionMethods.push({ kind: "request", method });
      else errors.push({ source: "request", message: `agent request the client does not handle: ${method}` });
      throw acp.RequestError.methodNotFound(method);
    })
    .onNotification("*", ({ method }) => {
      if (method.startsWith("_")) summary.extensionMethods.push({ kind: "notification", method });
      else errors.push({ source: "notification", message: `agent notification the client does not handle: ${method}` });
    });

  const conn = app.connect(stream);
  let sessionId;
  try {
    for (const req of clientRequests(opts.capture)) {
      let params = structuredClone(req.params);
      if (req.method === "initialize") {
        const caps = { ...(params.clientCapabilities ?? {}) };
        if (opts.subagents) caps.subagents = {};
        if (opts.elicitationForm) caps.elicitation = { ...(caps.elicitation ?? {}), form: {} };
        params.clientCapabilities = caps;
      }
      if (sessionId && typeof params.sessionId === "string") params.sessionId = sessionId;
      let result;
      try {
        result = await conn.agent.request(req.method, params);
      } catch (e) {
        errors.push({ source: "response", message: `${req.method} failed: ${e?.message ?? e}`, data: e?.data });
        continue;
      }
      summary.requests.push(req.method);
      if (req.method === "initialize") summary.agentMeta = result?.agentCapabilities?._meta ?? null;
      if (req.method === "session/new") sessionId = result?.sessionId;
      if (req.method === "session/prompt") summary.stopReasons.push(result?.stopReason ?? null);
    }
  } finally {
    // End the session the way an editor does: close the agent's stdin, then
    // read everything it still writes until it exits.
    child.stdin.end();
    summary.agentExit = await exited;
    // The connection closes when the agent's stdout ends; the timer (unref'd,
    // so it never keeps Node alive) only bounds a transport that never ends.
    await Promise.race([conn.closed, new Promise((r) => setTimeout(r, 5000).unref())]);
    conn.close();
  }
  if (summary.stopReasons.length === 0 || summary.stopReasons.some((s) => typeof s !== "string")) {
    errors.push({ source: "turn", message: "a prompt turn did not end with a stop reason" });
  }
  process.stdout.write(JSON.stringify(summary, null, 2) + "\n");
  process.exitCode = errors.length === 0 ? 0 : 1;
}

function safeJSON(v) {
  try {
    return v instanceof Error ? String(v.stack ?? v) : JSON.stringify(v);
  } catch {
    return String(v);
  }
}

main().catch((e) => {
  process.stderr.write(`drive.mjs: ${e?.stack ?? e}\n`);
  process.exitCode = 2;
});

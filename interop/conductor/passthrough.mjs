// passthrough.mjs: the trivial proxy component of the conductor test, written
// with the official TypeScript ACP SDK (@agentclientprotocol/sdk): it
// forwards every request and notification of its client side to its
// successor through the TypeScript conductor's envelope
// (_proxy/successor/request, _proxy/successor/notification, params
// {method, params}), delivers the successor's wrapped requests and
// notifications to the client side unwrapped, and accepts the proxy
// handshake (initialize with _meta.proxy: true answered with
// _meta.proxy: true). It changes nothing else: next to acp-normalize in a
// chain it must not change what the client sees.
//
//   node passthrough.mjs        a component on stdio, as a conductor starts one
//
// compare.mjs runs it inside the conductor's process instead (the SDK app
// on the conductor's in-process channel), which saves a Node start per
// session.

import { Readable, Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import * as acp from "@agentclientprotocol/sdk";

const REQUEST = "_proxy/successor/request";
const NOTIFICATION = "_proxy/successor/notification";

// passthroughApp is the component as an SDK agent app.
export function passthroughApp() {
  return acp
    .agent({ name: "passthrough" })
    .onRequest("*", async ({ method, params, client }) => {
      if (method === REQUEST) return client.request(params.method, params.params);
      const result = await client.request(REQUEST, { method, params });
      if (method === "initialize") return { ...result, _meta: { ...(result?._meta ?? {}), proxy: true } };
      return result;
    })
    .onNotification("*", ({ method, params, client }) => {
      if (method === NOTIFICATION) return client.notify(params.method, params.params);
      return client.notify(NOTIFICATION, { method, params });
    });
}

// channelStream adapts a conductor connection end ({send, messages}) to
// the SDK's Stream of messages.
export function channelStream(end) {
  const it = end.messages[Symbol.asyncIterator]();
  return {
    readable: new ReadableStream({
      async pull(controller) {
        const { value, done } = await it.next();
        if (done) controller.close();
        else controller.enqueue(value);
      },
    }),
    writable: new WritableStream({
      write(msg) {
        end.send(msg);
      },
    }),
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const conn = passthroughApp().connect(acp.ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin)));
  // The conductor ends a component by closing its stdin.
  process.stdin.on("end", () => conn.close());
  await conn.closed;
}

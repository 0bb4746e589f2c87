// stdio.mjs: the TypeScript conductor (@thinkwell/conductor) as a stdio ACP
// agent, for an editor or the capture rig. The package has no command of
// its own; this is the few lines one writes to use it (README, "Pipelines").
//
//   node stdio.mjs [--proxy COMMAND]... -- AGENT [ARGS...]
//
// Each --proxy is one proxy component, client side first (a command line,
// split on spaces; quotes group). The conductor logs at warn, on stderr:
// stdout carries the protocol only.

import { createInterface } from "node:readline";
import { Conductor, staticInstantiator } from "@thinkwell/conductor";

const usage = "usage: node stdio.mjs [--proxy COMMAND]... -- AGENT [ARGS...]";
const proxies = [];
let agent = [];
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  if (argv[i] === "--proxy") proxies.push(argv[++i] ?? "");
  else if (argv[i] === "--") {
    agent = argv.slice(i + 1);
    break;
  } else {
    process.stderr.write(`stdio.mjs: unknown argument ${argv[i]}; ${usage}\n`);
    process.exit(2);
  }
}
if (agent.length === 0) {
  process.stderr.write(`stdio.mjs: no agent; ${usage}\n`);
  process.exit(2);
}

// The client's side: one JSON-RPC message per line on stdin and stdout.
const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
const client = {
  send: (msg) => process.stdout.write(JSON.stringify(msg) + "\n"),
  messages: (async function* () {
    for await (const line of lines) if (line.trim()) yield JSON.parse(line);
  })(),
  close: async () => lines.close(),
};

const conductor = new Conductor({
  instantiator: staticInstantiator({ proxies, agent: { command: agent[0], args: agent.slice(1) } }),
  logging: { level: "warn", name: "conductor" },
});
await conductor.connect({ connect: async () => client });
